import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileErrors, validate } from "@readme/openapi-parser";
import { expect } from "chai";
import { builtinSource } from "../host/plugin-sources.js";
import gitPlugin, { git, redactUrl } from "../plugins/git/index.js";
import { builtinPlugins } from "../plugins/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";

function tempDir(prefix: string): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/** Runs git for test setup with a fixed identity, never through a shell. */
function sh(cwd: string, ...args: string[]): string {
  return execFileSync(
    "git",
    [
      "-c",
      "user.name=Test",
      "-c",
      "user.email=test@example.com",
      "-c",
      "commit.gpgsign=false",
      "-c",
      "init.defaultBranch=main",
      ...args,
    ],
    { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
}

function initRepo(dir: string, files: Record<string, string | Buffer> = {}): void {
  sh(dir, "init", "-q");
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  if (Object.keys(files).length) {
    sh(dir, "add", "-A");
    sh(dir, "commit", "-q", "-m", "initial");
  }
}

interface DiffFileView {
  path: string;
  oldPath?: string;
  status: string;
  additions: number;
  deletions: number;
  binary: boolean;
  truncated: boolean;
  hunks: Array<{
    oldStart: number;
    oldLines: number;
    newStart: number;
    newLines: number;
    lines: Array<{ type: string; content: string }>;
  }>;
}

describe("git plugin: git-info and the session diff", function () {
  this.timeout(30000);
  let d: TestDaemon;
  let root: string;
  let outside: string;
  let repo: string;

  const withGit = builtinPlugins.some((p) => p.manifest.id === "git") ? builtinPlugins : [...builtinPlugins, gitPlugin];
  const start = (options: Record<string, unknown> = {}) =>
    startTestDaemon({
      builtins: withGit.map(builtinSource),
      env: { AGENTD_MODEL: "test-model" },
      config: { pluginOptions: { git: { roots: [root], ...options } } },
    });

  before(async () => {
    root = tempDir("agentd-git-root-");
    outside = tempDir("agentd-git-outside-");
    d = await start();
  });
  after(async () => {
    await d.cleanup();
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  beforeEach(() => {
    repo = join(root, `repo-${Math.random().toString(36).slice(2)}`);
    mkdirSync(repo);
  });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  const diffOf = async (cwd: string, client: TestDaemon = d) => {
    const id = await client.createSession({ cwd });
    const res = await client.get(`/sessions/${id}/diff`);
    expect(res.status).to.equal(200);
    return res.body as {
      files: DiffFileView[];
      groups: Record<string, string[]>;
      truncated: boolean;
      noRepo?: true;
      hasCommits?: boolean;
    };
  };
  const file = (diff: { files: DiffFileView[] }, p: string) => {
    const f = diff.files.find((x) => x.path === p);
    expect(f, `${p} in ${JSON.stringify(diff.files.map((x) => x.path))}`).to.not.equal(undefined);
    return f as DiffFileView;
  };

  describe("GET /git-info", () => {
    it("describes a repository: branch, HEAD, dirty counts, last commit, remotes without credentials", async () => {
      initRepo(repo, { "a.txt": "a\n", "b.txt": "b\n" });
      sh(repo, "remote", "add", "origin", "https://user:s3cr3t-token@example.com/team/repo.git");
      sh(repo, "remote", "add", "backup", "git@example.com:team/repo.git");
      writeFileSync(join(repo, "a.txt"), "changed\n");
      writeFileSync(join(repo, "new.txt"), "n\n");
      writeFileSync(join(repo, "b.txt"), "staged\n");
      sh(repo, "add", "b.txt");
      const res = await d.get(`/git-info?cwd=${encodeURIComponent(repo)}`);
      expect(res.status).to.equal(200);
      const head = sh(repo, "rev-parse", "HEAD").trim();
      expect(res.body).to.deep.include({
        isGit: true,
        cwd: repo,
        root: repo,
        hasCommits: true,
        branch: "main",
        detached: false,
        head,
        upstream: null,
        ahead: null,
        behind: null,
        clean: false,
        dirty: { staged: 1, unstaged: 1, untracked: 1, conflicted: 0 },
      });
      expect(res.body.lastCommit).to.include({ sha: head, subject: "initial", author: "Test" });
      expect(res.body.remotes).to.deep.equal([
        { name: "backup", url: "git@example.com:team/repo.git" },
        { name: "origin", url: "https://example.com/team/repo.git" },
      ]);
      expect(res.text).to.not.contain("s3cr3t");
    });

    it("reports ahead/behind an upstream, detached HEAD and a subdirectory's root", async () => {
      initRepo(repo, { "a.txt": "a\n" });
      const clone = join(root, `clone-${Math.random().toString(36).slice(2)}`);
      try {
        sh(root, "clone", "-q", repo, clone);
        writeFileSync(join(clone, "c.txt"), "c\n");
        sh(clone, "add", "c.txt");
        sh(clone, "commit", "-q", "-m", "ahead");
        const info = (await d.get(`/git-info?cwd=${encodeURIComponent(clone)}`)).body;
        expect(info).to.include({ branch: "main", upstream: "origin/main", ahead: 1, behind: 0, clean: true });
        sh(clone, "checkout", "-q", "--detach", "HEAD~1");
        const detached = (await d.get(`/git-info?cwd=${encodeURIComponent(clone)}`)).body;
        expect(detached).to.include({ detached: true, branch: null });
        mkdirSync(join(clone, "sub"));
        const sub = (await d.get(`/git-info?cwd=${encodeURIComponent(join(clone, "sub"))}`)).body;
        expect(sub).to.include({ isGit: true, root: clone });
      } finally {
        rmSync(clone, { recursive: true, force: true });
      }
    });

    it("handles a repository without commits and plain directories", async () => {
      initRepo(repo);
      writeFileSync(join(repo, "x.txt"), "x");
      const empty = (await d.get(`/git-info?cwd=${encodeURIComponent(repo)}`)).body;
      expect(empty).to.include({ isGit: true, hasCommits: false, head: null, branch: "main", lastCommit: null });
      expect(empty.dirty.untracked).to.equal(1);
      const plain = join(root, `plain-${Math.random().toString(36).slice(2)}`);
      mkdirSync(plain);
      try {
        expect((await d.get(`/git-info?cwd=${encodeURIComponent(plain)}`)).body).to.deep.equal({
          isGit: false,
          cwd: plain,
        });
      } finally {
        rmSync(plain, { recursive: true });
      }
      expect((await d.get(`/git-info?cwd=${encodeURIComponent(join(root, "missing"))}`)).body.isGit).to.equal(false);
      expect((await d.get("/git-info")).body).to.deep.equal({ isGit: false, cwd: "" });
      expect((await d.get("/git-info?cwd=sandbox")).body).to.deep.equal({ isGit: false, cwd: "sandbox" });
    });

    it("only inspects permitted directories: roots and session directories", async () => {
      initRepo(outside, { "o.txt": "o\n" });
      try {
        const refused = await d.get(`/git-info?cwd=${encodeURIComponent(outside)}`);
        expect(refused.status).to.equal(400);
        expect(refused.body.error).to.match(/outside/);
        expect((await d.get("/git-info?cwd=relative/dir")).status).to.equal(400);
        const id = await d.createSession({ cwd: outside });
        expect((await d.get(`/git-info?cwd=${encodeURIComponent(outside)}`)).body).to.include({ isGit: true });
        expect((await d.get(`/git-info?session=${id}`)).body).to.include({ isGit: true, root: outside });
        expect((await d.get("/git-info?session=nope")).status).to.equal(404);
        await d.delete(`/sessions/${id}/permanent`);
        expect((await d.get(`/git-info?cwd=${encodeURIComponent(outside)}`)).status).to.equal(400);
      } finally {
        rmSync(join(outside, ".git"), { recursive: true, force: true });
        rmSync(join(outside, "o.txt"), { force: true });
      }
    });
  });

  describe("GET /sessions/{id}/diff", () => {
    it("shows modified, added, deleted, renamed (git mv) and untracked files with hunks", async () => {
      const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n");
      initRepo(repo, { "mod.txt": `${lines}\n`, "gone.txt": "bye\n", "old-name.txt": "keep me\nas is\n" });
      writeFileSync(join(repo, "mod.txt"), `${lines.replace("line 10", "line ten")}\n`);
      rmSync(join(repo, "gone.txt"));
      sh(repo, "mv", "old-name.txt", "new-name.txt");
      writeFileSync(join(repo, "staged.txt"), "fresh\n");
      sh(repo, "add", "staged.txt");
      writeFileSync(join(repo, "untracked.txt"), "u1\nu2\n");

      const diff = await diffOf(repo);
      expect(diff.truncated).to.equal(false);
      expect(diff.hasCommits).to.equal(true);
      expect(diff.groups).to.deep.equal({
        untracked: ["untracked.txt"],
        added: ["staged.txt"],
        modified: ["mod.txt"],
        deleted: ["gone.txt"],
        renamed: ["new-name.txt"],
      });

      const mod = file(diff, "mod.txt");
      expect(mod).to.include({ status: "modified", additions: 1, deletions: 1, binary: false, truncated: false });
      expect(mod.hunks).to.have.length(1);
      const h = mod.hunks[0]!;
      expect(h).to.include({ oldStart: 7, oldLines: 7, newStart: 7, newLines: 7 });
      expect(h.lines.filter((l) => l.type !== " ")).to.deep.equal([
        { type: "-", content: "line 10" },
        { type: "+", content: "line ten" },
      ]);
      expect(h.lines[0]).to.deep.equal({ type: " ", content: "line 7" });

      const renamed = file(diff, "new-name.txt");
      expect(renamed).to.include({ status: "renamed", oldPath: "old-name.txt", additions: 0, deletions: 0 });
      expect(renamed.hunks).to.deep.equal([]);

      const gone = file(diff, "gone.txt");
      expect(gone).to.include({ status: "deleted", deletions: 1 });
      expect(gone.hunks[0]!.lines).to.deep.equal([{ type: "-", content: "bye" }]);

      expect(file(diff, "staged.txt")).to.include({ status: "added", additions: 1 });
      const untracked = file(diff, "untracked.txt");
      expect(untracked).to.include({ status: "untracked", additions: 2 });
      expect(untracked.hunks).to.deep.equal([
        {
          oldStart: 0,
          oldLines: 0,
          newStart: 1,
          newLines: 2,
          header: "",
          lines: [
            { type: "+", content: "u1" },
            { type: "+", content: "u2" },
          ],
        },
      ]);
    });

    it("marks binary files (tracked and untracked) without hunks", async () => {
      initRepo(repo, { "img.bin": Buffer.from([0, 1, 2, 3, 0, 255]) });
      writeFileSync(join(repo, "img.bin"), Buffer.from([0, 9, 9, 9, 0, 255, 7]));
      writeFileSync(join(repo, "new.bin"), Buffer.from([1, 0, 2]));
      const diff = await diffOf(repo);
      expect(file(diff, "img.bin")).to.include({ status: "modified", binary: true });
      expect(file(diff, "img.bin").hunks).to.deep.equal([]);
      expect(file(diff, "new.bin")).to.include({ status: "untracked", binary: true });
      expect(file(diff, "new.bin").hunks).to.deep.equal([]);
    });

    it("works in a repository without commits", async () => {
      initRepo(repo);
      writeFileSync(join(repo, "staged.txt"), "s\n");
      sh(repo, "add", "staged.txt");
      writeFileSync(join(repo, "loose.txt"), "l\n");
      const diff = await diffOf(repo);
      expect(diff.hasCommits).to.equal(false);
      expect(diff.groups.added).to.deep.equal(["staged.txt"]);
      expect(diff.groups.untracked).to.deep.equal(["loose.txt"]);
      expect(file(diff, "staged.txt").hunks[0]!.lines).to.deep.equal([{ type: "+", content: "s" }]);
    });

    it("answers noRepo with empty lists outside a work tree", async () => {
      writeFileSync(join(repo, "x.txt"), "x");
      const diff = await diffOf(repo);
      expect(diff).to.deep.equal({
        files: [],
        groups: { untracked: [], added: [], modified: [], deleted: [], renamed: [] },
        truncated: false,
        noRepo: true,
      });
      expect((await d.get("/sessions/nope/diff")).status).to.equal(404);
    });

    it("treats hostile file names as data: no shell, exact paths", async () => {
      const names = [
        "$(touch pwned).txt",
        "a; touch pwned2.txt",
        "with space.txt",
        'quote"d.txt',
        "tab\there.txt",
        "ünï.txt",
      ];
      initRepo(repo, Object.fromEntries(names.map((n) => [n, "one\n"])));
      for (const n of names) writeFileSync(join(repo, n), "two\n");
      writeFileSync(join(repo, "`touch pwned3`.txt"), "new\n");
      const diff = await diffOf(repo);
      expect(diff.groups.modified.slice().sort()).to.deep.equal(names.slice().sort());
      expect(diff.groups.untracked).to.deep.equal(["`touch pwned3`.txt"]);
      for (const n of names) {
        expect(file(diff, n).hunks[0]!.lines).to.deep.equal([
          { type: "-", content: "one" },
          { type: "+", content: "two" },
        ]);
      }
      for (const p of ["pwned", "pwned2.txt", "pwned3"]) expect(existsSync(join(repo, p)), p).to.equal(false);
    });

    it("limits a session in a subdirectory to its subtree, relative paths, without .agentd", async () => {
      mkdirSync(join(repo, "pkg"));
      initRepo(repo, { "top.txt": "t\n" });
      writeFileSync(join(repo, "top.txt"), "changed\n");
      writeFileSync(join(repo, "pkg", "inner.txt"), "i\n");
      mkdirSync(join(repo, "pkg", ".agentd", "plans"), { recursive: true });
      writeFileSync(join(repo, "pkg", ".agentd", "plans", "plan.md"), "p\n");
      const diff = await diffOf(join(repo, "pkg"));
      expect(diff.files.map((f) => f.path)).to.deep.equal(["inner.txt"]);
    });

    it("truncates huge diffs and says so", async () => {
      const small = await start({ maxDiffLines: 50, maxDiffFiles: 2 });
      try {
        initRepo(repo, { "big.txt": `${Array.from({ length: 200 }, (_, i) => `a${i}`).join("\n")}\n` });
        writeFileSync(join(repo, "big.txt"), `${Array.from({ length: 200 }, (_, i) => `b${i}`).join("\n")}\n`);
        writeFileSync(join(repo, "another.txt"), "l\n");
        writeFileSync(join(repo, "later.txt"), "l\n");
        const diff = await diffOf(repo, small);
        expect(diff.truncated).to.equal(true);
        expect(diff.files.map((f) => f.path)).to.deep.equal(["big.txt", "another.txt"]);
        expect((diff as { omittedFiles?: number }).omittedFiles).to.equal(1);
        const big = file(diff, "big.txt");
        expect(big).to.include({ truncated: true, additions: 200, deletions: 200 });
        const shown = big.hunks.reduce((n, h) => n + h.lines.length, 0);
        expect(shown).to.equal(50);
        expect(file(diff, "another.txt")).to.include({ truncated: true, additions: 1 });
      } finally {
        await small.cleanup();
      }
    });
  });

  it("documents both routes in a valid OpenAPI document", async () => {
    const doc = (await d.get("/openapi.json", { auth: false })).body;
    const result = await validate(structuredClone(doc));
    expect(result.valid, result.valid ? "" : compileErrors(result)).to.equal(true);
    expect(doc.paths["/api/v1/git-info"].get.responses).to.have.property("200");
    expect(doc.paths["/api/v1/sessions/{id}/diff"].get.responses).to.have.property("200");
  });

  describe("helpers", () => {
    it("git() runs without a shell, bounds output and reports a missing repository", async () => {
      initRepo(repo, { "a.txt": `${"x".repeat(5000)}\n` });
      const cut = await git(repo, ["show", "HEAD:a.txt"], { maxBytes: 100 });
      expect(cut.truncated).to.equal(true);
      expect(cut.stdout).to.have.length(100);
      const outsideRepo = await git(tmpdir(), ["rev-parse", "--show-toplevel", "--", "$(touch pwned)"]);
      expect(outsideRepo.code).to.not.equal(0);
      expect(existsSync(join(tmpdir(), "pwned"))).to.equal(false);
    });

    it("redacts credentials from remote URLs", () => {
      expect(redactUrl("https://tok@github.com/a/b")).to.equal("https://github.com/a/b");
      expect(redactUrl("ssh://git:pw@host/x")).to.equal("ssh://git@host/x");
      expect(redactUrl("git@github.com:a/b.git")).to.equal("git@github.com:a/b.git");
    });
  });
});
