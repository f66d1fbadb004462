import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path, { join } from "node:path";
import { expect } from "chai";
import fc from "fast-check";
import {
  git,
  isInside,
  resolveInside,
  ShellClassifierToken,
  writePrivateFile,
  writePrivateFileAsync,
} from "../core/index.js";
import shellPlugin from "../plugins/tools-shell/index.js";
import { startPluginHarness } from "../testing/index.js";

describe("shared helpers in the SDK", () => {
  describe("isInside / resolveInside", () => {
    it("accepts the root and what is below it, nothing else (no prefix confusion)", () => {
      expect(isInside("/a/b", "/a/b")).to.equal(true);
      expect(isInside("/a/b", "/a/b/c/d")).to.equal(true);
      expect(isInside("/a/b/", "/a/b/c")).to.equal(true);
      expect(isInside("/a/b", "/a/bc")).to.equal(false);
      expect(isInside("/a/b", "/a")).to.equal(false);
      expect(isInside("/", "/etc")).to.equal(true);
    });

    it("resolveInside resolves relative and absolute inputs and refuses those that leave the root", () => {
      expect(resolveInside("/w", "src/../lib/x.ts")).to.equal("/w/lib/x.ts");
      expect(resolveInside("/w", "/w/a")).to.equal("/w/a");
      expect(resolveInside("/w", ".")).to.equal("/w");
      expect(resolveInside("/w", "../w2/x")).to.equal(undefined);
      expect(resolveInside("/w", "/etc/passwd")).to.equal(undefined);
    });

    it("whatever resolveInside returns is inside the root (property)", () => {
      const seg = fc.constantFrom("a", "b", "..", ".", "", "w", "a..b");
      fc.assert(
        fc.property(fc.array(seg, { maxLength: 8 }), fc.boolean(), (segs, absolute) => {
          const input = (absolute ? "/" : "") + segs.join("/");
          const out = resolveInside("/w/root", input);
          const expected = path.resolve("/w/root", input);
          if (out === undefined) return !isInside("/w/root", expected);
          return out === expected && isInside("/w/root", out);
        }),
      );
    });
  });

  describe("private state files (writePrivateFile, writePrivateFileAsync)", () => {
    for (const [name, write] of [
      ["sync", async (f: string, c: string) => writePrivateFile(f, c)],
      ["async", writePrivateFileAsync],
    ] as const) {
      it(`${name}: creates the directory, writes 0600, replaces the old content whole and leaves no temporary file`, async () => {
        const dir = mkdtempSync(join(tmpdir(), "agentd-private-"));
        try {
          const file = join(dir, "nested", "state.json");
          await write(file, "a much longer first version");
          await write(file, "short");
          expect(readFileSync(file, "utf8")).to.equal("short");
          expect(statSync(file).mode & 0o777).to.equal(0o600);
          expect(readdirSync(join(dir, "nested"))).to.deep.equal(["state.json"]);
          // A failed write (the target is a directory) keeps nothing behind and throws.
          await write(join(dir, "nested"), "nope").then(
            () => expect.fail("writing over a directory must fail"),
            (err: Error) => expect(err).to.be.an("error"),
          );
          expect(readdirSync(dir)).to.deep.equal(["nested"]);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    }
  });

  describe("the git runner", () => {
    let repo: string;
    before(async () => {
      repo = mkdtempSync(join(tmpdir(), "agentd-git-"));
      expect((await git(repo, ["init", "-q"])).code).to.equal(0);
    });
    after(() => rmSync(repo, { recursive: true, force: true }));

    it("feeds stdin, adds environment, and never runs a shell", async () => {
      const blob = await git(repo, ["hash-object", "--stdin"], { input: "hello\n" });
      expect(blob.stdout.trim()).to.equal("ce013625030ba8dba906f756967f9e9ca394464a");
      const who = await git(repo, ["var", "GIT_AUTHOR_IDENT"], { env: { GIT_AUTHOR_NAME: "agentd; rm -rf /" } });
      expect(who.stdout).to.match(/^agentd; rm -rf \/ /);
    });

    it("stops git when onStdout asks, and reports failures without throwing", async () => {
      const r = await git(repo, ["hash-object", "--stdin"], { input: "x", onStdout: () => true });
      expect(r.stopped).to.equal(true);
      const bad = await git(repo, ["no-such-command"]);
      expect(bad.code).to.not.equal(0);
      expect(bad.stderr).to.match(/no-such-command/);
    });
  });

  it("the shell classifier is a service of tools-shell that other plugins ask for by token", async () => {
    const h = await startPluginHarness(shellPlugin, { origin: "builtin" });
    try {
      const classifier = h.get(ShellClassifierToken);
      expect(classifier.classify("rm -rf build").dangerous).to.equal(true);
      expect(classifier.classify("ls -la").dangerous).to.equal(false);
    } finally {
      await h.stop();
    }
  });
});
