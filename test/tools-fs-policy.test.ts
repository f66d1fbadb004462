import { mkdir, readFile, rm, stat, symlink } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import type { ToolDefinition } from "../core/index.js";
import fsPlugin from "../plugins/tools-fs/index.js";
import { registerPlugin } from "../testing/plugin-harness.js";
import { ctxFor, errorOf, ok, toolsFsFixture } from "./support/tools-fs.js";

describe("tools-fs", function () {
  this.timeout(60_000);
  const { fx, run } = toolsFsFixture();

  describe("plugin", () => {
    it("registers the six tools, with read/ls/glob/grep read-only and write/edit not", () => {
      const { tools: added } = registerPlugin(fsPlugin, { home: fx.tmp });
      expect(fsPlugin.manifest.id).to.equal("tools-fs");
      const flags = Object.fromEntries(added.map((t) => [t.name, t.readOnly === true]));
      expect(flags).to.deep.equal({ read: true, write: false, edit: false, ls: true, glob: true, grep: true });
    });

    it("uses the parameter names of the reference tools", () => {
      const props = (t: ToolDefinition) => Object.keys((t.parameters as unknown as { properties: object }).properties);
      expect(props(fx.tools.read)).to.deep.equal(["path", "offset", "limit"]);
      expect(props(fx.tools.write)).to.deep.equal(["path", "content"]);
      expect(props(fx.tools.edit)).to.deep.equal(["filePath", "oldString", "newString", "replaceAll"]);
      expect(props(fx.tools.glob)).to.deep.equal(["pattern", "path", "limit"]);
      expect(props(fx.tools.ls)).to.deep.equal(["path", "limit"]);
      expect(props(fx.tools.grep)).to.include.members([
        "pattern",
        "path",
        "glob",
        "ignoreCase",
        "literal",
        "context",
        "limit",
      ]);
    });
  });

  describe("path policy", () => {
    it("resolves relative paths against ctx.cwd and accepts absolute paths inside it", async () => {
      expect(ok(await run(fx.tools.read, { path: "src/a.ts" }))).to.include("alpha");
      expect(ok(await run(fx.tools.read, { path: path.join(fx.repo, "src", "a.ts") }))).to.include("alpha");
      expect(ok(await run(fx.tools.read, { path: "src/../src/./a.ts" }))).to.include("alpha");
    });

    it("refuses .. escaping the working directory with outside_workspace, naming the path", async () => {
      const res = await run(fx.tools.read, { path: "../outside/secret.txt" });
      expect(errorOf(res).code).to.equal("outside_workspace");
      expect(res.content).to.include("../outside/secret.txt").and.not.include("TOP-SECRET");
      expect(res.error?.suggestedFix).to.include(fx.repo);
      expect(errorOf(await run(fx.tools.ls, { path: ".." })).code).to.equal("outside_workspace");
      expect(errorOf(await run(fx.tools.write, { path: "../escape.txt", content: "x" })).code).to.equal(
        "outside_workspace",
      );
      await stat(path.join(fx.tmp, "escape.txt")).then(
        () => expect.fail("escape.txt was written"),
        (err: NodeJS.ErrnoException) => expect(err.code).to.equal("ENOENT"),
      );
    });

    it("refuses absolute paths outside the working directory", async () => {
      expect(errorOf(await run(fx.tools.read, { path: "/etc/hostname" })).code).to.equal("outside_workspace");
      expect(errorOf(await run(fx.tools.glob, { pattern: "*", path: "/etc" })).code).to.equal("outside_workspace");
      expect(errorOf(await run(fx.tools.grep, { pattern: "root", path: "/etc/passwd" })).code).to.equal(
        "outside_workspace",
      );
    });

    it("refuses symbolic links whose target leaves the working directory, for reads and writes", async () => {
      const read = await run(fx.tools.read, { path: "link-out.txt" });
      expect(errorOf(read).code).to.equal("outside_workspace");
      expect(read.content).to.include("link-out.txt").and.include("symbolic link").and.not.include("TOP-SECRET");
      expect(errorOf(await run(fx.tools.read, { path: "linkdir-out/secret.txt" })).code).to.equal("outside_workspace");
      expect(errorOf(await run(fx.tools.ls, { path: "linkdir-out" })).code).to.equal("outside_workspace");
      expect(errorOf(await run(fx.tools.grep, { pattern: "SECRET", path: "linkdir-out" })).code).to.equal(
        "outside_workspace",
      );
      expect(errorOf(await run(fx.tools.write, { path: "link-out.txt", content: "pwned" })).code).to.equal(
        "outside_workspace",
      );
      const edit = await run(fx.tools.edit, { filePath: "link-out.txt", oldString: "TOP", newString: "BOTTOM" });
      expect(errorOf(edit).code).to.equal("outside_workspace");
      expect(await readFile(path.join(fx.outside, "secret.txt"), "utf8")).to.include("TOP-SECRET");
    });

    it("refuses writing through a symlinked parent directory or a dangling link that points outside", async () => {
      expect(errorOf(await run(fx.tools.write, { path: "linkdir-out/new/deep.txt", content: "x" })).code).to.equal(
        "outside_workspace",
      );
      expect(errorOf(await run(fx.tools.write, { path: "dangling-out.txt", content: "x" })).code).to.equal(
        "outside_workspace",
      );
      const edit = await run(fx.tools.edit, { filePath: "linkdir-out/created.txt", oldString: "", newString: "x" });
      expect(errorOf(edit).code).to.equal("outside_workspace");
      for (const name of ["new", "not-yet.txt", "created.txt"]) {
        await stat(path.join(fx.outside, name)).then(
          () => expect.fail(`${name} was created outside the workspace`),
          (err: NodeJS.ErrnoException) => expect(err.code).to.equal("ENOENT"),
        );
      }
    });

    it("follows symbolic links that stay inside the working directory", async () => {
      expect(ok(await run(fx.tools.read, { path: "link-in.ts" }))).to.include("alpha");
    });

    it("never lists or searches content behind outward links", async () => {
      const grep = ok(await run(fx.tools.grep, { pattern: "SECRET" }));
      expect(grep).to.include("No matches");
      const glob = ok(await run(fx.tools.glob, { pattern: "**/secret.txt" }));
      expect(glob).to.include("No files match");
    });

    it("reports a symbolic link loop instead of hanging", async () => {
      await symlink("loop-b", path.join(fx.repo, "loop-a"));
      await symlink("loop-a", path.join(fx.repo, "loop-b"));
      try {
        const res = await run(fx.tools.read, { path: "loop-a" });
        expect(errorOf(res).code).to.equal("invalid_arguments");
        expect(res.content).to.include("loop-a").and.include("loop");
      } finally {
        await rm(path.join(fx.repo, "loop-a"));
        await rm(path.join(fx.repo, "loop-b"));
      }
    });

    it("refuses a NUL byte in a path", async () => {
      expect(errorOf(await run(fx.tools.read, { path: "src/a.ts\0.png" })).code).to.equal("invalid_arguments");
    });

    it("allows a plans directory that lies outside the working directory", async () => {
      const plans = path.join(fx.tmp, "home-plans", "s-fs");
      const planCtx = ctxFor(fx.repo, { mode: "plan", plansDir: plans });
      ok(await run(fx.tools.write, { path: path.join(plans, "plan.md"), content: "## Steps\n- [ ] one\n" }, planCtx));
      expect(ok(await run(fx.tools.read, { path: path.join(plans, "plan.md") }, planCtx))).to.include("- [ ] one");
      expect(
        errorOf(await run(fx.tools.read, { path: path.join(fx.tmp, "home-plans", "other.md") }, planCtx)).code,
      ).to.equal("outside_workspace");
    });

    it("does not let a committed .agentd symlink redirect plan-mode writes outside", async () => {
      const cwd = path.join(fx.tmp, "evil");
      await mkdir(cwd, { recursive: true });
      await symlink(fx.outside, path.join(cwd, ".agentd"));
      const planCtx = ctxFor(cwd, { mode: "plan" });
      const res = await run(fx.tools.write, { path: ".agentd/plans/s-fs/plan.md", content: "x" }, planCtx);
      expect(errorOf(res).code).to.equal("outside_workspace");
      await stat(path.join(fx.outside, "plans")).then(
        () => expect.fail("plans dir created outside"),
        (err: NodeJS.ErrnoException) => expect(err.code).to.equal("ENOENT"),
      );
    });

    it("reports a missing working directory readably", async () => {
      const res = await run(fx.tools.ls, {}, ctxFor(path.join(fx.tmp, "gone")));
      expect(errorOf(res).code).to.equal("not_found");
      expect(res.content).to.include("working directory");
    });
  });
});
