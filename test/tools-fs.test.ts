import { execFileSync } from "node:child_process";
import { closeSync, openSync, writeSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import fc from "fast-check";
import type { ToolContext, ToolDefinition, ToolResult } from "../core/index.js";
import fsPlugin, { createFsTools, type FsTools } from "../plugins/tools-fs/index.js";
import { fsFailure } from "../plugins/tools-fs/result.js";
import { makeToolContext, registerPlugin } from "../testing/plugin-harness.js";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9]);
const GIF = Buffer.concat([Buffer.from("GIF89a"), Buffer.from([1, 0, 1, 0, 0, 0, 0, 0x3b])]);
const WEBP = Buffer.concat([
  Buffer.from("RIFF"),
  Buffer.from([26, 0, 0, 0]),
  Buffer.from("WEBPVP8 "),
  Buffer.alloc(14),
]);
const BIG_ROWS = 1 << 20;
const ROW_BYTES = 50;

/** `row <n>` padded to exactly ROW_BYTES bytes: a 50 MiB file whose line n is predictable. */
function row(n: number): string {
  const head = `row ${String(n).padStart(8, "0")} `;
  return `${head}${(n === BIG_ROWS ? "needle-at-the-end" : "").padEnd(ROW_BYTES - head.length - 1, "x")}\n`;
}

function writeBigFile(file: string): void {
  const fd = openSync(file, "w");
  try {
    const perBlock = 20_000;
    for (let start = 1; start <= BIG_ROWS; start += perBlock) {
      const lines: string[] = [];
      for (let n = start; n < start + perBlock && n <= BIG_ROWS; n++) lines.push(row(n));
      writeSync(fd, lines.join(""));
    }
  } finally {
    closeSync(fd);
  }
}

function ctxFor(cwd: string, over: Partial<ToolContext> = {}): ToolContext {
  return makeToolContext({ sessionId: "s-fs", cwd, ...over });
}

function errorOf(result: ToolResult) {
  expect(result.isError, result.content).to.equal(true);
  return result.error ?? expect.fail("error details missing");
}

function ok(result: ToolResult): string {
  expect(result.isError, result.content).to.not.equal(true);
  return result.content;
}

/** grep -n with context, written the obvious way (whole file in memory): the oracle for the streaming search. */
function referenceGrep(text: string, pattern: string, before: number, after: number, name: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const clean = lines.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  const re = new RegExp(pattern, "u");
  const isHit = clean.map((l) => re.test(l));
  const out: string[] = [];
  let lastShown = -1;
  isHit.forEach((hit, h) => {
    if (!hit) return;
    const from = Math.max(h - before, lastShown + 1);
    const to = Math.max(lastShown, Math.min(h + after, clean.length - 1));
    if ((before > 0 || after > 0) && out.length > 0 && from > lastShown + 1) out.push("--");
    for (let i = from; i <= to; i++)
      out.push(`${name}${isHit[i] ? ":" : "-"}${i + 1}${isHit[i] ? ":" : "-"}${clean[i]}`);
    lastShown = to;
  });
  return out;
}

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", args, { cwd, stdio: "ignore" });
}

describe("tools-fs", function () {
  this.timeout(60_000);
  let tmp: string;
  let repo: string;
  let outside: string;
  let tools: FsTools;
  let ctx: ToolContext;
  const run = (tool: ToolDefinition, args: Record<string, unknown>, c: ToolContext = ctx) => tool.execute(args, c);

  before(async () => {
    tmp = await realpath(await mkdtemp(path.join(tmpdir(), "agentd-fs-")));
    repo = path.join(tmp, "repo");
    outside = path.join(tmp, "outside");
    await mkdir(path.join(repo, "src", "nested", "deep"), { recursive: true });
    await mkdir(path.join(repo, "ignored"), { recursive: true });
    await mkdir(path.join(repo, "docs"), { recursive: true });
    await mkdir(outside, { recursive: true });
    git(repo, "init", "-q");
    await writeFile(path.join(repo, ".gitignore"), "ignored/\n*.log\n!keep.log\n");
    await writeFile(
      path.join(repo, "src", "a.ts"),
      "export const alpha = 1;\nexport const beta = 2;\n// TODO: gamma\n",
    );
    await writeFile(
      path.join(repo, "src", "nested", "deep", "b.ts"),
      "import { alpha } from '../../a';\nconsole.log(alpha);\n",
    );
    await writeFile(path.join(repo, "src", "c.js"), "const Needle = 'NEEDLE';\nmodule.exports = Needle;\n");
    await writeFile(path.join(repo, "README.md"), "# Project\n\nSome needle text.\n");
    await writeFile(path.join(repo, "ignored", "hidden.txt"), "needle in an ignored dir\n");
    await writeFile(path.join(repo, "debug.log"), "needle in an ignored log\n");
    await writeFile(path.join(repo, "keep.log"), "needle in a re-included log\n");
    await writeFile(
      path.join(repo, "blob.bin"),
      Buffer.concat([Buffer.from("needle"), Buffer.from([0, 1, 2, 0xff]), Buffer.from("needle")]),
    );
    await writeFile(path.join(repo, "pixel.png"), PNG);
    await writeFile(path.join(repo, "photo.jpg"), JPEG);
    await writeFile(path.join(repo, "anim.gif"), GIF);
    await writeFile(path.join(repo, "pic.webp"), WEBP);
    await writeFile(
      path.join(repo, "latin1.txt"),
      Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6e, 0x61, 0xef, 0x76, 0x65, 0x0a]),
    );
    await writeFile(path.join(repo, "crlf.txt"), "one\r\ntwo\r\nthree\r\n");
    await writeFile(path.join(repo, "empty.txt"), "");
    await writeFile(path.join(outside, "secret.txt"), "TOP-SECRET needle outside the workspace\n");
    await symlink(path.join(outside, "secret.txt"), path.join(repo, "link-out.txt"));
    await symlink(outside, path.join(repo, "linkdir-out"));
    await symlink(path.join(outside, "not-yet.txt"), path.join(repo, "dangling-out.txt"));
    await symlink("src/a.ts", path.join(repo, "link-in.ts"));
    writeBigFile(path.join(repo, "big.txt"));
    await writeFile(path.join(repo, "oneline.min.js"), `${"a".repeat(3 * 1024 * 1024)}needle-far-away\n`);
    execFileSync("mkfifo", [path.join(repo, "pipe")]);
    git(repo, "add", "src/a.ts", ".gitignore");
    tools = createFsTools();
    ctx = ctxFor(repo);
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  describe("plugin", () => {
    it("registers the six tools, with read/ls/glob/grep read-only and write/edit not", () => {
      const { tools: added } = registerPlugin(fsPlugin, { home: tmp });
      expect(fsPlugin.manifest.id).to.equal("tools-fs");
      const flags = Object.fromEntries(added.map((t) => [t.name, t.readOnly === true]));
      expect(flags).to.deep.equal({ read: true, write: false, edit: false, ls: true, glob: true, grep: true });
    });

    it("uses the parameter names of the reference tools", () => {
      const props = (t: ToolDefinition) => Object.keys((t.parameters as unknown as { properties: object }).properties);
      expect(props(tools.read)).to.deep.equal(["path", "offset", "limit"]);
      expect(props(tools.write)).to.deep.equal(["path", "content"]);
      expect(props(tools.edit)).to.deep.equal(["filePath", "oldString", "newString", "replaceAll"]);
      expect(props(tools.glob)).to.deep.equal(["pattern", "path", "limit"]);
      expect(props(tools.ls)).to.deep.equal(["path", "limit"]);
      expect(props(tools.grep)).to.include.members([
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
      expect(ok(await run(tools.read, { path: "src/a.ts" }))).to.include("alpha");
      expect(ok(await run(tools.read, { path: path.join(repo, "src", "a.ts") }))).to.include("alpha");
      expect(ok(await run(tools.read, { path: "src/../src/./a.ts" }))).to.include("alpha");
    });

    it("refuses .. escaping the working directory with outside_workspace, naming the path", async () => {
      const res = await run(tools.read, { path: "../outside/secret.txt" });
      expect(errorOf(res).code).to.equal("outside_workspace");
      expect(res.content).to.include("../outside/secret.txt").and.not.include("TOP-SECRET");
      expect(res.error?.suggestedFix).to.include(repo);
      expect(errorOf(await run(tools.ls, { path: ".." })).code).to.equal("outside_workspace");
      expect(errorOf(await run(tools.write, { path: "../escape.txt", content: "x" })).code).to.equal(
        "outside_workspace",
      );
      await stat(path.join(tmp, "escape.txt")).then(
        () => expect.fail("escape.txt was written"),
        (err: NodeJS.ErrnoException) => expect(err.code).to.equal("ENOENT"),
      );
    });

    it("refuses absolute paths outside the working directory", async () => {
      expect(errorOf(await run(tools.read, { path: "/etc/hostname" })).code).to.equal("outside_workspace");
      expect(errorOf(await run(tools.glob, { pattern: "*", path: "/etc" })).code).to.equal("outside_workspace");
      expect(errorOf(await run(tools.grep, { pattern: "root", path: "/etc/passwd" })).code).to.equal(
        "outside_workspace",
      );
    });

    it("refuses symbolic links whose target leaves the working directory, for reads and writes", async () => {
      const read = await run(tools.read, { path: "link-out.txt" });
      expect(errorOf(read).code).to.equal("outside_workspace");
      expect(read.content).to.include("link-out.txt").and.include("symbolic link").and.not.include("TOP-SECRET");
      expect(errorOf(await run(tools.read, { path: "linkdir-out/secret.txt" })).code).to.equal("outside_workspace");
      expect(errorOf(await run(tools.ls, { path: "linkdir-out" })).code).to.equal("outside_workspace");
      expect(errorOf(await run(tools.grep, { pattern: "SECRET", path: "linkdir-out" })).code).to.equal(
        "outside_workspace",
      );
      expect(errorOf(await run(tools.write, { path: "link-out.txt", content: "pwned" })).code).to.equal(
        "outside_workspace",
      );
      const edit = await run(tools.edit, { filePath: "link-out.txt", oldString: "TOP", newString: "BOTTOM" });
      expect(errorOf(edit).code).to.equal("outside_workspace");
      expect(await readFile(path.join(outside, "secret.txt"), "utf8")).to.include("TOP-SECRET");
    });

    it("refuses writing through a symlinked parent directory or a dangling link that points outside", async () => {
      expect(errorOf(await run(tools.write, { path: "linkdir-out/new/deep.txt", content: "x" })).code).to.equal(
        "outside_workspace",
      );
      expect(errorOf(await run(tools.write, { path: "dangling-out.txt", content: "x" })).code).to.equal(
        "outside_workspace",
      );
      const edit = await run(tools.edit, { filePath: "linkdir-out/created.txt", oldString: "", newString: "x" });
      expect(errorOf(edit).code).to.equal("outside_workspace");
      for (const name of ["new", "not-yet.txt", "created.txt"]) {
        await stat(path.join(outside, name)).then(
          () => expect.fail(`${name} was created outside the workspace`),
          (err: NodeJS.ErrnoException) => expect(err.code).to.equal("ENOENT"),
        );
      }
    });

    it("follows symbolic links that stay inside the working directory", async () => {
      expect(ok(await run(tools.read, { path: "link-in.ts" }))).to.include("alpha");
    });

    it("never lists or searches content behind outward links", async () => {
      const grep = ok(await run(tools.grep, { pattern: "SECRET" }));
      expect(grep).to.include("No matches");
      const glob = ok(await run(tools.glob, { pattern: "**/secret.txt" }));
      expect(glob).to.include("No files match");
    });

    it("reports a symbolic link loop instead of hanging", async () => {
      await symlink("loop-b", path.join(repo, "loop-a"));
      await symlink("loop-a", path.join(repo, "loop-b"));
      try {
        const res = await run(tools.read, { path: "loop-a" });
        expect(errorOf(res).code).to.equal("invalid_arguments");
        expect(res.content).to.include("loop-a").and.include("loop");
      } finally {
        await rm(path.join(repo, "loop-a"));
        await rm(path.join(repo, "loop-b"));
      }
    });

    it("refuses a NUL byte in a path", async () => {
      expect(errorOf(await run(tools.read, { path: "src/a.ts\0.png" })).code).to.equal("invalid_arguments");
    });

    it("allows a plans directory that lies outside the working directory", async () => {
      const plans = path.join(tmp, "home-plans", "s-fs");
      const planCtx = ctxFor(repo, { mode: "plan", plansDir: plans });
      ok(await run(tools.write, { path: path.join(plans, "plan.md"), content: "## Steps\n- [ ] one\n" }, planCtx));
      expect(ok(await run(tools.read, { path: path.join(plans, "plan.md") }, planCtx))).to.include("- [ ] one");
      expect(errorOf(await run(tools.read, { path: path.join(tmp, "home-plans", "other.md") }, planCtx)).code).to.equal(
        "outside_workspace",
      );
    });

    it("does not let a committed .agentd symlink redirect plan-mode writes outside", async () => {
      const cwd = path.join(tmp, "evil");
      await mkdir(cwd, { recursive: true });
      await symlink(outside, path.join(cwd, ".agentd"));
      const planCtx = ctxFor(cwd, { mode: "plan" });
      const res = await run(tools.write, { path: ".agentd/plans/s-fs/plan.md", content: "x" }, planCtx);
      expect(errorOf(res).code).to.equal("outside_workspace");
      await stat(path.join(outside, "plans")).then(
        () => expect.fail("plans dir created outside"),
        (err: NodeJS.ErrnoException) => expect(err.code).to.equal("ENOENT"),
      );
    });

    it("reports a missing working directory readably", async () => {
      const res = await run(tools.ls, {}, ctxFor(path.join(tmp, "gone")));
      expect(errorOf(res).code).to.equal("not_found");
      expect(res.content).to.include("working directory");
    });
  });

  describe("read", () => {
    it("returns numbered lines and pages with offset and limit", async () => {
      const all = ok(await run(tools.read, { path: "src/a.ts" }));
      expect(all.split("\n")).to.deep.equal([
        "     1\texport const alpha = 1;",
        "     2\texport const beta = 2;",
        "     3\t// TODO: gamma",
      ]);
      const page = await run(tools.read, { path: "src/a.ts", offset: 2, limit: 1 });
      expect(ok(page)).to.match(/^ {5}2\texport const beta = 2;\n\n\[Showing lines 2-2 of 3\. Call read with offset=3/);
      expect(page.meta).to.include({ startLine: 2, endLine: 2, totalLines: 3, truncated: true });
    });

    it("refuses an offset past the end, and says how long the file is", async () => {
      const res = await run(tools.read, { path: "src/a.ts", offset: 10 });
      expect(errorOf(res).code).to.equal("invalid_arguments");
      expect(res.content).to.include("3 lines");
    });

    it("strips CRLF, reads empty files, and decodes invalid UTF-8 without failing", async () => {
      expect(ok(await run(tools.read, { path: "crlf.txt" }))).to.not.include("\r");
      expect(ok(await run(tools.read, { path: "empty.txt" }))).to.include("empty");
      expect(ok(await run(tools.read, { path: "latin1.txt" })))
        .to.include("caf\uFFFD")
        .and.include("na\uFFFDve");
    });

    it("pages through a 50 MiB file with bounded output and a note", async () => {
      const first = await run(tools.read, { path: "big.txt" });
      const text = ok(first);
      expect(Buffer.byteLength(text)).to.be.at.most(128 * 1024 + 512);
      expect(text)
        .to.include("     1\trow 00000001 ")
        .and.include("  2000\trow 00002000 ")
        .and.not.include("row 00002001");
      expect(text).to.include("[Showing lines 1-2000 of 1048576. Call read with offset=2001 to continue.]");
      expect(first.meta).to.include({ startLine: 1, endLine: 2000, totalLines: BIG_ROWS, truncated: true });
      const clamped = await run(tools.read, { path: "big.txt", limit: 1_000_000 });
      expect(clamped.meta).to.include({ startLine: 1, endLine: 2000 });
      const deep = ok(await run(tools.read, { path: "big.txt", offset: BIG_ROWS, limit: 5 }));
      expect(deep).to.include(`${BIG_ROWS}\trow ${String(BIG_ROWS).padStart(8, "0")} needle-at-the-end`);
    });

    it("truncates a huge single line instead of loading it", async () => {
      const res = await run(tools.read, { path: "oneline.min.js" });
      const text = ok(res);
      expect(text.length).to.be.below(5_000);
      expect(text).to.include("[line truncated: 3.0 MiB in total]").and.include("longer than 2000 characters");
    });

    it("caps output by lines and by bytes with small limits", async () => {
      const small = createFsTools({ readMaxLines: 100, readMaxBytes: 1_000 });
      const res = await run(small.read, { path: "big.txt", offset: 10 });
      const text = ok(res);
      expect(Buffer.byteLength(text.split("\n\n[")[0] ?? "")).to.be.at.most(1_000);
      expect(text).to.include("Output capped by size").and.include("offset=");
      const lines = await run(createFsTools({ readMaxLines: 3 }).read, { path: "big.txt" });
      expect(ok(lines)).to.include("Showing lines 1-3 of 1048576").and.include("offset=4");
    });

    for (const [file, mime, bytes] of [
      ["pixel.png", "image/png", PNG],
      ["photo.jpg", "image/jpeg", JPEG],
      ["anim.gif", "image/gif", GIF],
      ["pic.webp", "image/webp", WEBP],
    ] as const) {
      it(`attaches ${mime} images as a data URL`, async () => {
        const res = await run(tools.read, { path: file });
        ok(res);
        expect(res.images).to.have.length(1);
        const url = res.images?.[0]?.dataUrl ?? "";
        expect(url.startsWith(`data:${mime};base64,`)).to.equal(true);
        expect(Buffer.from(url.split(",")[1] ?? "", "base64").equals(bytes)).to.equal(true);
        expect(res.content).to.include(file).and.include(mime);
      });
    }

    it("refuses images over the size cap with too_large", async () => {
      const res = await run(createFsTools({ readMaxImageBytes: 10 }).read, { path: "pixel.png" });
      expect(errorOf(res).code).to.equal("too_large");
      expect(res.images).to.equal(undefined);
    });

    it("refuses binary files, directories, special files and missing files with clear errors", async () => {
      const bin = await run(tools.read, { path: "blob.bin" });
      expect(errorOf(bin).code).to.equal("invalid_arguments");
      expect(bin.content).to.include("blob.bin is a binary file");
      const dir = await run(tools.read, { path: "src" });
      expect(errorOf(dir).code).to.equal("invalid_arguments");
      expect(dir.content).to.include("src is a directory");
      expect(dir.error?.suggestedFix).to.include("ls");
      const fifo = await run(tools.read, { path: "pipe" });
      expect(errorOf(fifo).code).to.equal("invalid_arguments");
      expect(fifo.content).to.include("not a regular file");
      const missing = await run(tools.read, { path: "src/nope.ts" });
      expect(errorOf(missing).code).to.equal("not_found");
      expect(missing.content).to.include("src/nope.ts");
    });

    it("validates arguments and honours an aborted signal", async () => {
      expect(errorOf(await run(tools.read, { path: "src/a.ts", offset: 0 })).code).to.equal("invalid_arguments");
      expect(errorOf(await run(tools.read, { path: 42 })).code).to.equal("invalid_arguments");
      const ac = new AbortController();
      ac.abort();
      expect(errorOf(await run(tools.read, { path: "big.txt" }, ctxFor(repo, { signal: ac.signal }))).code).to.equal(
        "aborted",
      );
    });

    it("maps permission errors to permission_denied", () => {
      const denied = fsFailure(Object.assign(new Error("EACCES"), { code: "EACCES" }), "x.txt");
      expect(denied.error?.code).to.equal("permission_denied");
      expect(denied.content).to.include("x.txt");
      expect(fsFailure(Object.assign(new Error("EPERM"), { code: "EPERM" }), "y").error?.code).to.equal(
        "permission_denied",
      );
    });

    it("reports an unreadable file as permission_denied, and grep names it instead of failing", async function () {
      if (process.getuid?.() === 0) this.skip(); // root reads mode-000 files
      await mkdir(path.join(repo, "locked"), { recursive: true });
      const file = path.join(repo, "locked", "locked.txt");
      await writeFile(file, "needle", { mode: 0o000 });
      try {
        expect(errorOf(await run(tools.read, { path: "locked/locked.txt" })).code).to.equal("permission_denied");
        expect(ok(await run(tools.grep, { pattern: "needle", path: "locked" }))).to.include(
          "Could not read 1 file: locked/locked.txt",
        );
      } finally {
        await rm(path.join(repo, "locked"), { recursive: true, force: true });
      }
    });
  });

  describe("write", () => {
    it("creates parent directories and reports a new file", async () => {
      const res = await run(tools.write, { path: "out/new/dir/file.txt", content: "hello\nworld\n" });
      expect(ok(res))
        .to.include("Created out/new/dir/file.txt")
        .and.include("2 lines")
        .and.include("Created directory out");
      expect(res.meta).to.include({ created: true, changed: true });
      expect(await readFile(path.join(repo, "out/new/dir/file.txt"), "utf8")).to.equal("hello\nworld\n");
    });

    it("reports an overwrite, and an identical write as unchanged", async () => {
      await run(tools.write, { path: "out/over.txt", content: "first" });
      const res = await run(tools.write, { path: "out/over.txt", content: "second!" });
      expect(ok(res)).to.include("Overwrote out/over.txt").and.include("previously 5 bytes");
      expect(res.meta).to.include({ created: false, changed: true });
      const same = await run(tools.write, { path: "out/over.txt", content: "second!" });
      expect(same.meta).to.include({ created: false, changed: false });
      expect(await readFile(path.join(repo, "out/over.txt"), "utf8")).to.equal("second!");
    });

    it("refuses directories, special files and a file used as a directory", async () => {
      expect(errorOf(await run(tools.write, { path: "src", content: "x" })).code).to.equal("invalid_arguments");
      expect(errorOf(await run(tools.write, { path: "pipe", content: "x" })).code).to.equal("invalid_arguments");
      const res = await run(tools.write, { path: "src/a.ts/child.txt", content: "x" });
      expect(errorOf(res).code).to.equal("not_found");
      expect(res.content).to.include("src/a.ts/child.txt");
    });

    it("in plan mode writes only inside the plans directory, creating it on demand", async () => {
      const planCtx = ctxFor(repo, { mode: "plan", sessionId: "p1", plansDir: path.join(repo, ".agentd/plans/p1") });
      const denied = await run(tools.write, { path: "src/plan-mode.ts", content: "x" }, planCtx);
      expect(errorOf(denied).code).to.equal("permission_denied");
      expect(denied.content).to.include("plan mode").and.include("src/plan-mode.ts");
      expect(denied.error?.suggestedFix).to.include(".agentd/plans/p1");
      const dirItself = await run(tools.write, { path: ".agentd/plans/p1", content: "x" }, planCtx);
      expect(errorOf(dirItself).code).to.equal("permission_denied");
      ok(await run(tools.write, { path: ".agentd/plans/p1/plan.md", content: "# Plan\n" }, planCtx));
      expect(await readFile(path.join(repo, ".agentd/plans/p1/plan.md"), "utf8")).to.equal("# Plan\n");
      await stat(path.join(repo, "src/plan-mode.ts")).then(
        () => expect.fail("written in plan mode"),
        (err: NodeJS.ErrnoException) => expect(err.code).to.equal("ENOENT"),
      );
      expect(ok(await run(tools.read, { path: "src/a.ts" }, planCtx))).to.include("alpha");
      expect(ok(await run(tools.grep, { pattern: "alpha", outputMode: "count" }, planCtx))).to.include("src/a.ts:1");
    });
  });

  describe("edit", () => {
    const file = "edit/target.ts";
    beforeEach(async () => {
      await mkdir(path.join(repo, "edit"), { recursive: true });
      await writeFile(path.join(repo, file), "const a = 1;\nfoo();\nfoo();\nfoo();\nconst b = 2;\n");
    });
    const content = () => readFile(path.join(repo, file), "utf8");

    it("replaces a unique exact match and shows the result with line numbers", async () => {
      const res = await run(tools.edit, { filePath: file, oldString: "const b = 2;", newString: "const b = 3;" });
      expect(ok(res)).to.include("replaced 1 occurrence").and.include("     5\tconst b = 3;");
      expect(await content()).to.equal("const a = 1;\nfoo();\nfoo();\nfoo();\nconst b = 3;\n");
    });

    it("refuses an ambiguous match, saying how many and where, and leaves the file alone", async () => {
      const res = await run(tools.edit, { filePath: file, oldString: "foo();", newString: "bar();" });
      expect(errorOf(res).code).to.equal("conflict");
      expect(res.content).to.include("matches 3 places").and.include("lines 2, 3, 4");
      expect(res.error?.suggestedFix).to.include("replaceAll");
      expect(await content()).to.include("foo();\nfoo();\nfoo();");
    });

    it("replaces every occurrence with replaceAll", async () => {
      const res = await run(tools.edit, { filePath: file, oldString: "foo();", newString: "bar();", replaceAll: true });
      expect(ok(res)).to.include("replaced 3 occurrences");
      expect(await content()).to.equal("const a = 1;\nbar();\nbar();\nbar();\nconst b = 2;\n");
    });

    it("reports an absent match with similar lines, and refuses identical strings", async () => {
      const res = await run(tools.edit, { filePath: file, oldString: "const  b = 2;", newString: "x" });
      expect(errorOf(res).code).to.equal("not_found");
      expect(res.content).to.include("was not found in edit/target.ts").and.include("     5\tconst b = 2;");
      const same = await run(tools.edit, { filePath: file, oldString: "foo();", newString: "foo();" });
      expect(errorOf(same).code).to.equal("invalid_arguments");
      expect(same.content).to.include("identical");
    });

    it("creates a file from an empty oldString, but never overwrites a non-empty one that way", async () => {
      ok(await run(tools.edit, { filePath: "edit/new/fresh.ts", oldString: "", newString: "fresh\n" }));
      expect(await readFile(path.join(repo, "edit/new/fresh.ts"), "utf8")).to.equal("fresh\n");
      expect(errorOf(await run(tools.edit, { filePath: file, oldString: "", newString: "x" })).code).to.equal(
        "invalid_arguments",
      );
      expect(
        errorOf(await run(tools.edit, { filePath: "edit/missing.ts", oldString: "a", newString: "b" })).code,
      ).to.equal("not_found");
    });

    it("keeps CRLF line endings when the model sends LF", async () => {
      await writeFile(path.join(repo, "edit/crlf.txt"), "one\r\ntwo\r\nthree\r\n");
      ok(await run(tools.edit, { filePath: "edit/crlf.txt", oldString: "one\ntwo", newString: "uno\ndos" }));
      expect(await readFile(path.join(repo, "edit/crlf.txt"), "utf8")).to.equal("uno\r\ndos\r\nthree\r\n");
    });

    it("keeps invalid UTF-8 bytes elsewhere in the file intact", async () => {
      const bytes = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6f, 0x6c, 0x64, 0x0a]);
      await writeFile(path.join(repo, "edit/latin1.txt"), bytes);
      ok(await run(tools.edit, { filePath: "edit/latin1.txt", oldString: "old", newString: "new ✓" }));
      const after = await readFile(path.join(repo, "edit/latin1.txt"));
      expect(after.equals(Buffer.concat([bytes.subarray(0, 5), Buffer.from("new ✓\n")]))).to.equal(true);
    });

    it("refuses binary, special, oversized and directory targets", async () => {
      expect(
        errorOf(await run(tools.edit, { filePath: "blob.bin", oldString: "needle", newString: "x" })).code,
      ).to.equal("invalid_arguments");
      expect(errorOf(await run(tools.edit, { filePath: "pipe", oldString: "a", newString: "b" })).code).to.equal(
        "invalid_arguments",
      );
      expect(errorOf(await run(tools.edit, { filePath: "src", oldString: "a", newString: "b" })).code).to.equal(
        "invalid_arguments",
      );
      const big = await run(tools.edit, { filePath: "big.txt", oldString: "row 00000001", newString: "x" });
      expect(errorOf(big).code).to.equal("too_large");
      expect(big.content).to.include("50 MiB");
    });

    it("in plan mode edits only inside the plans directory", async () => {
      const planCtx = ctxFor(repo, { mode: "plan", sessionId: "p2", plansDir: path.join(repo, ".agentd/plans/p2") });
      const denied = await run(tools.edit, { filePath: file, oldString: "const a = 1;", newString: "x" }, planCtx);
      expect(errorOf(denied).code).to.equal("permission_denied");
      expect(await content()).to.include("const a = 1;");
      ok(
        await run(tools.edit, { filePath: ".agentd/plans/p2/plan.md", oldString: "", newString: "- [ ] a\n" }, planCtx),
      );
      ok(
        await run(
          tools.edit,
          { filePath: ".agentd/plans/p2/plan.md", oldString: "- [ ] a", newString: "- [x] a" },
          planCtx,
        ),
      );
      expect(await readFile(path.join(repo, ".agentd/plans/p2/plan.md"), "utf8")).to.equal("- [x] a\n");
    });
  });

  describe("ls", () => {
    it("lists directories first, then files with sizes and links with targets, hiding .git", async () => {
      const text = ok(await run(tools.ls, {}));
      const lines = text.split("\n");
      expect(lines[0]).to.match(/^\.\/ \(\d+ directories, \d+ files\)$/);
      expect(lines.indexOf("src/")).to.be.below(lines.findIndex((l) => l.startsWith("README.md")));
      expect(text)
        .to.include("README.md  (29 B)")
        .and.include("link-in.ts -> src/a.ts")
        .and.include("pipe (special file)");
      expect(text).to.include("ignored/").and.not.include(".git/");
      expect(lines).to.include(".gitignore  (25 B)");
    });

    it("caps entries with a note and refuses files and missing paths", async () => {
      expect(ok(await run(tools.ls, { limit: 2 }))).to.match(/\[Showing 2 of \d+ entries/);
      expect(ok(await run(tools.ls, { path: "src/nested/deep" }))).to.include("b.ts  (");
      expect(errorOf(await run(tools.ls, { path: "README.md" })).code).to.equal("invalid_arguments");
      expect(errorOf(await run(tools.ls, { path: "nope" })).code).to.equal("not_found");
    });
  });

  describe("glob", () => {
    it("finds files at any depth, respects .gitignore and skips .git and symbolic links", async () => {
      const text = ok(await run(tools.glob, { pattern: "*.ts" }));
      expect(text.split("\n")).to.include.members(["src/a.ts", "src/nested/deep/b.ts"]).and.not.include("link-in.ts");
      expect(
        ok(await run(tools.glob, { pattern: "src/**/*.ts" }))
          .split("\n")
          .sort(),
      ).to.deep.equal(["src/a.ts", "src/nested/deep/b.ts"]);
      const logs = ok(await run(tools.glob, { pattern: "*.log" }));
      expect(logs).to.equal("keep.log");
      expect(ok(await run(tools.glob, { pattern: "**/*" })))
        .to.not.include("ignored/")
        .and.not.include(".git/");
    });

    it("sorts newest first (name breaks ties) and caps with a note", async () => {
      await mkdir(path.join(repo, "dated"), { recursive: true });
      for (const [name, secs] of [
        ["old.md", 1_000],
        ["new.md", 3_000],
        ["mid.md", 2_000],
        ["also-mid.md", 2_000],
      ] as const) {
        await writeFile(path.join(repo, "dated", name), name);
        await utimes(path.join(repo, "dated", name), secs, secs);
      }
      const text = ok(await run(tools.glob, { pattern: "*.md", path: "dated" }));
      expect(text.split("\n")).to.deep.equal(["dated/new.md", "dated/also-mid.md", "dated/mid.md", "dated/old.md"]);
      const capped = ok(await run(tools.glob, { pattern: "dated/*.md", limit: 1 }));
      expect(capped).to.match(/^dated\/new\.md\n\n\[Showing the 1 newest of 4 matches/);
    });

    it("searches an ignored directory when asked for it explicitly", async () => {
      expect(ok(await run(tools.glob, { pattern: "*.txt", path: "ignored" }))).to.equal("ignored/hidden.txt");
    });

    it("applies .gitignore files outside a git repository too", async () => {
      const plain = path.join(tmp, "plain");
      await mkdir(path.join(plain, "build"), { recursive: true });
      await mkdir(path.join(plain, "sub"), { recursive: true });
      await writeFile(path.join(plain, ".gitignore"), "build/\n");
      await writeFile(path.join(plain, "sub", ".gitignore"), "*.tmp\n!keep.tmp\n");
      for (const f of ["a.txt", "build/out.txt", "sub/x.tmp", "sub/keep.tmp", "sub/b.txt"])
        await writeFile(path.join(plain, f), f);
      const res = await run(tools.glob, { pattern: "**/*.{txt,tmp}" }, ctxFor(plain));
      expect(ok(res).split("\n").sort()).to.deep.equal(["a.txt", "sub/b.txt", "sub/keep.tmp"]);
      expect(res.meta).to.include({ engine: "ripgrep" });
      const js = await createFsTools({}, "javascript").glob.execute({ pattern: "**/*.{txt,tmp}" }, ctxFor(plain));
      expect(js.content).to.equal(res.content);
      expect(js.meta).to.include({ engine: "javascript" });
    });

    it("reports no match, refuses escaping patterns and file paths", async () => {
      expect(ok(await run(tools.glob, { pattern: "*.nothing" }))).to.include('No files match "*.nothing"');
      expect(errorOf(await run(tools.glob, { pattern: "../*" })).code).to.equal("invalid_arguments");
      expect(errorOf(await run(tools.glob, { pattern: "/etc/*" })).code).to.equal("invalid_arguments");
      expect(errorOf(await run(tools.glob, { pattern: "*", path: "README.md" })).code).to.equal("invalid_arguments");
    });
  });

  describe("grep", () => {
    it("prints path:line:text, respecting .gitignore and skipping binary files with a note", async () => {
      const res = await run(tools.grep, { pattern: "needle", glob: "*.{md,log,bin}" });
      const text = ok(res);
      expect(text).to.include("README.md:3:Some needle text.").and.include("keep.log:1:needle in a re-included log");
      expect(text).to.not.include("debug.log").and.not.include("hidden.txt");
      expect(text).to.include("[Skipped 1 binary file with matches.]");
      expect(res.meta).to.deep.include({ mode: "content", matches: 2, files: 2, truncated: false });
    });

    it("supports literal, case-insensitive, inline (?i) and Unicode patterns", async () => {
      expect(ok(await run(tools.grep, { pattern: "alpha = 1;", literal: true, path: "src" }))).to.include(
        "src/a.ts:1:",
      );
      expect(ok(await run(tools.grep, { pattern: "a.pha", literal: true, path: "src" }))).to.include("No matches");
      expect(ok(await run(tools.grep, { pattern: "a.pha", path: "src/a.ts" }))).to.include("src/a.ts:1:");
      const ci = ok(await run(tools.grep, { pattern: "needle", ignoreCase: true, path: "src" }));
      expect(ci).to.equal("src/c.js:1:const Needle = 'NEEDLE';\nsrc/c.js:2:module.exports = Needle;");
      expect(ok(await run(tools.grep, { pattern: "(?i)NEEDLE =", path: "src" }))).to.include("src/c.js:1:");
      expect(ok(await run(tools.grep, { pattern: "\\bcaf\\p{L}?", path: "src" }))).to.include("No matches");
      const bad = await run(tools.grep, { pattern: "foo(" });
      expect(errorOf(bad).code).to.equal("invalid_arguments");
      expect(bad.content).to.include("literal");
    });

    it("prints context lines and separates groups like grep", async () => {
      await mkdir(path.join(repo, "ctx"), { recursive: true });
      const lines = Array.from({ length: 12 }, (_, i) =>
        i === 2 || i === 4 || i === 10 ? `hit ${i + 1}` : `line ${i + 1}`,
      );
      await writeFile(path.join(repo, "ctx", "f.txt"), `${lines.join("\n")}\n`);
      const text = ok(await run(tools.grep, { pattern: "^hit", path: "ctx", context: 1 }));
      expect(text.split("\n")).to.deep.equal([
        "ctx/f.txt-2-line 2",
        "ctx/f.txt:3:hit 3",
        "ctx/f.txt-4-line 4",
        "ctx/f.txt:5:hit 5",
        "ctx/f.txt-6-line 6",
        "--",
        "ctx/f.txt-10-line 10",
        "ctx/f.txt:11:hit 11",
        "ctx/f.txt-12-line 12",
      ]);
      const after = ok(await run(tools.grep, { pattern: "^hit 11", path: "ctx", before: 0, after: 2 }));
      expect(after.split("\n")).to.deep.equal(["ctx/f.txt:11:hit 11", "ctx/f.txt-12-line 12"]);
    });

    it("has files_with_matches and count output modes", async () => {
      const files = await run(tools.grep, { pattern: "alpha", outputMode: "files_with_matches", glob: "*.ts" });
      expect(ok(files).split("\n")).to.deep.equal(["src/a.ts", "src/nested/deep/b.ts"]);
      const count = ok(await run(tools.grep, { pattern: "alpha", outputMode: "count", path: "src" }));
      expect(count).to.equal("src/a.ts:1\nsrc/nested/deep/b.ts:2\n\n3 matching lines in 2 files.");
      expect(errorOf(await run(tools.grep, { pattern: "x", outputMode: "lines" })).code).to.equal("invalid_arguments");
    });

    it("gives the same lines as a whole-file reference for any chunk size, pattern and context", async () => {
      await mkdir(path.join(repo, "prop"), { recursive: true });
      const file = path.join(repo, "prop", "p.txt");
      const line = fc.constantFrom("alpha", "beta foo", "", "  foo", "gamma\r", "héllo wörld", "zzz", "foo");
      const pattern = fc.constantFrom("foo", "^foo", "foo$", "^$", "ö", "beta|gamma$", "^\\s+", "a{2}", "^z+$");
      await fc.assert(
        fc.asyncProperty(
          fc.array(line, { maxLength: 120 }),
          fc.boolean(),
          pattern,
          fc.nat(3),
          fc.nat(3),
          fc.constantFrom(16, 23, 64, 1024),
          async (lines, trailingNewline, pat, before, after, chunk) => {
            const text = lines.join("\n") + (trailingNewline && lines.length > 0 ? "\n" : "");
            await writeFile(file, text);
            const grep = createFsTools({ grepChunkBytes: chunk }).grep;
            const expected = referenceGrep(text, pat, before, after, "prop/p.txt");
            const res = ok(await run(grep, { pattern: pat, path: "prop/p.txt", before, after, limit: 2000 }));
            expect(res).to.equal(
              expected.length > 0 ? expected.join("\n") : `No matches for ${JSON.stringify(pat)} in prop/p.txt.`,
            );
            const count = ok(await run(grep, { pattern: pat, path: "prop/p.txt", outputMode: "count" }));
            const hits = expected.filter((l) => l.startsWith("prop/p.txt:")).length;
            expect(count.split("\n")[0]).to.equal(
              hits > 0 ? `prop/p.txt:${hits}` : `No matches for ${JSON.stringify(pat)} in prop/p.txt.`,
            );
          },
        ),
        { numRuns: 200 },
      );
    });

    it("keeps context lines right across skipped chunks of a big file", async () => {
      const res = ok(await run(tools.grep, { pattern: "^row 00001312 ", path: "big.txt", context: 3 }));
      const want = [1309, 1310, 1311, 1312, 1313, 1314, 1315].map(
        (n) => `big.txt${n === 1312 ? ":" : "-"}${n}${n === 1312 ? ":" : "-"}${row(n).trimEnd()}`,
      );
      expect(res.split("\n")).to.deep.equal(want);
    });

    it("stops at the limit and caps output bytes with notes", async () => {
      const res = await run(tools.grep, { pattern: "^row 0000000", path: "big.txt", limit: 3 });
      const text = ok(res);
      expect(text.split("\n\n")[0]?.split("\n")).to.have.length(3);
      expect(text).to.include("[Stopped at 3 matching lines; there are more.");
      expect(res.meta).to.include({ matches: 3, truncated: true });
      const files = ok(
        await run(tools.grep, { pattern: "alpha", outputMode: "files_with_matches", glob: "*.ts", limit: 1 }),
      );
      expect(files).to.equal(
        "src/a.ts\n\n[Stopped at 1 file; there are more. Narrow path, glob or pattern, or raise limit.]",
      );
      const small = createFsTools({ grepMaxBytes: 300 });
      const capped = ok(await run(small.grep, { pattern: "^row", path: "big.txt", limit: 1000 }));
      expect(Buffer.byteLength(capped.split("\n\n")[0] ?? "")).to.be.at.most(300);
      expect(capped).to.include("[Output capped at 300 B");
    });

    it("streams a 50 MiB file to a match on its last line", async () => {
      const res = await run(tools.grep, { pattern: "needle-at-the-end", path: ".", glob: "big.txt" });
      expect(ok(res)).to.equal(`big.txt:${BIG_ROWS}:${row(BIG_ROWS).trimEnd()}`);
    });

    it("keeps huge lines bounded and skips files over the size cap with a note", async () => {
      const res = ok(await run(tools.grep, { pattern: "^a{10}", path: "oneline.min.js" }));
      expect(res.length).to.be.below(2_000);
      expect(res).to.include("[line truncated, 3.0 MiB]");
      const short = createFsTools({ grepMaxLineBytes: 1024 });
      expect(ok(await run(short.grep, { pattern: "needle-far-away", path: "oneline.min.js" }))).to.include(
        "No matches",
      );
      const tiny = createFsTools({ grepMaxFileBytes: 1024 * 1024 });
      const skipped = await run(tiny.grep, { pattern: "needle", glob: "*.{txt,js}" });
      expect(ok(skipped)).to.include("Skipped 2 files over 1.0 MiB: big.txt, oneline.min.js");
    });

    it("decodes invalid UTF-8, searches a single file, and refuses special files", async () => {
      expect(ok(await run(tools.grep, { pattern: "na.ve", path: "latin1.txt" }))).to.equal("latin1.txt:2:na\uFFFDve");
      expect(ok(await run(tools.grep, { pattern: "two$", path: "crlf.txt" }))).to.equal("crlf.txt:2:two");
      expect(errorOf(await run(tools.grep, { pattern: "x", path: "pipe" })).code).to.equal("invalid_arguments");
      expect(errorOf(await run(tools.grep, { pattern: "x", path: "missing-dir" })).code).to.equal("not_found");
      expect(errorOf(await run(tools.grep, { pattern: "x", glob: "../*" })).code).to.equal("invalid_arguments");
    });

    it("returns aborted when the turn is aborted", async () => {
      const ac = new AbortController();
      ac.abort();
      expect(errorOf(await run(tools.grep, { pattern: "x" }, ctxFor(repo, { signal: ac.signal }))).code).to.equal(
        "aborted",
      );
    });
  });
});
