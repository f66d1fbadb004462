import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, lstatSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import {
  fileTimes,
  RIPGREP_ENV,
  resetSearchEngine,
  type SearchEngineName,
  searchEngine,
  type ToolContext,
  type ToolResult,
} from "../core/index.js";
import { searchFiles } from "../plugins/files/search.js";
import { createFsTools, type FsLimits } from "../plugins/tools-fs/index.js";
import { startTestDaemon } from "../testing/daemon.js";
import { makeToolContext } from "../testing/plugin-harness.js";

/*
 * The file searches give the same answers on ripgrep and on the JavaScript walk (core/search). These tests need
 * ripgrep (Debian's ripgrep package, which .ci/run installs): without it they fail, they never skip.
 */

const ENGINES: SearchEngineName[] = ["ripgrep", "javascript"];

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", args, { cwd, stdio: "ignore" });
}

/** Waits (bounded) until `check` holds, yielding to the event loop between tries. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) expect.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie still answers kill(0); /proc tells.
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, "utf8") : "";
  return stat !== "" && !/^\d+ \(.*\) Z /.test(stat);
}

describe("search engines (ripgrep and the JavaScript fallback agree)", function () {
  this.timeout(60_000);
  let tmp: string;
  let repo: string;
  const savedXdg = process.env.XDG_CONFIG_HOME;

  const tools = (engine: SearchEngineName, limits: Partial<FsLimits> = {}) => createFsTools(limits, engine);
  const ctxFor = (cwd: string): ToolContext => makeToolContext({ sessionId: "s-search", cwd });
  const both = async (run: (engine: SearchEngineName) => Promise<ToolResult>) => {
    const [rg, js] = await Promise.all(ENGINES.map(run));
    expect(rg?.meta?.engine, rg?.content).to.equal("ripgrep");
    expect(js?.meta?.engine, js?.content).to.equal("javascript");
    expect(js?.content, "same output on both engines").to.equal(rg?.content);
    expect({ ...js?.meta, engine: "" }).to.deep.equal({ ...rg?.meta, engine: "" });
    return rg?.content ?? "";
  };

  before(async () => {
    expect(searchEngine().engine, "ripgrep (rg) must be installed for these tests").to.equal("ripgrep");
    tmp = await realpath(await mkdtemp(path.join(tmpdir(), "agentd-search-")));
    // The global git excludes of a user whose configuration lives in tmp/xdg.
    await mkdir(path.join(tmp, "xdg", "git"), { recursive: true });
    await writeFile(path.join(tmp, "xdg", "git", "ignore"), "*.globalignored\n");
    process.env.XDG_CONFIG_HOME = path.join(tmp, "xdg");
    repo = path.join(tmp, "repo");
    const files: Record<string, string | Buffer> = {
      ".gitignore": "build/\n*.log\n!keep.log\n/top-only.txt\n",
      ".ignore": "*.ignored\n",
      ".rgignore": "!again.ignored\n",
      "src/a.ts": "export const alpha = 1; // needle\nconst beta = alpha + 1;\nfunction runSync(x) { return x; }\n",
      "src/b.ts": "import { alpha } from './a';\n// NEEDLE upper\nfunction  readSync() {}\n",
      "src/.gitignore": "*.gen.ts\n!keep.gen.ts\n",
      "src/x.gen.ts": "needle generated\n",
      "src/keep.gen.ts": "needle kept generated\n",
      "src/sub/top-only.txt": "needle: only the root one is ignored\n",
      "top-only.txt": "needle at the top\n",
      "a.txt": "needle a.txt\n",
      "a/b.txt": "needle a/b.txt (sorts before a.txt)\n",
      "build/out.js": "needle built\n",
      "debug.log": "needle log\n",
      "keep.log": "needle kept log\n",
      "x.ignored": "needle dot-ignore\n",
      "again.ignored": "needle re-included by .rgignore\n",
      "excluded.txt": "needle excluded by info/exclude\n",
      "g.globalignored": "needle global\n",
      ".hidden/inside.txt": "needle in a hidden directory\n",
      ".dotfile": "needle in a dotfile\n",
      "blob.bin": Buffer.concat([Buffer.from("needle\n"), Buffer.from([0, 1, 2]), Buffer.from("needle\n")]),
      "other.bin": Buffer.from([0, 1, 2, 3]),
      "crlf.txt": "needle\r\nsecond needle line\r\n",
      "unicode/été.txt": "café needle ünïcode\n",
      "unicode/𝒳.txt": "astral needle\n",
      "unicode/\uE000.txt": "private use needle\n",
      "ctx/f.txt": `${Array.from({ length: 12 }, (_, i) => (i % 5 === 2 ? `needle ${i + 1}` : `line ${i + 1}`)).join("\n")}\n`,
      "words.txt": "foo_bar\nfoo bar\nfoofoo\nxfoo\néfoo\n",
    };
    for (const [rel, content] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(repo, rel)), { recursive: true });
      await writeFile(path.join(repo, rel), content);
    }
    // A name that is not UTF-8.
    await writeFile(Buffer.from(path.join(repo, "latin1-\xe9.txt"), "latin1"), "needle latin1 name\n");
    git(repo, "init", "-q");
    await writeFile(path.join(repo, ".git", "info", "exclude"), "excluded.txt\n");
    await writeFile(path.join(repo, ".git", "needle-in-git.txt"), "needle\n");
    await mkdir(path.join(tmp, "outside"));
    await writeFile(path.join(tmp, "outside", "secret.txt"), "needle outside\n");
    await symlink(path.join(tmp, "outside"), path.join(repo, "link-dir-out"));
    await symlink(path.join(tmp, "outside", "secret.txt"), path.join(repo, "link-out.txt"));
    await symlink("src/a.ts", path.join(repo, "link-in.ts"));
    // Equal times: glob's newest-first order then falls back to the path order on both engines.
    const stamp = new Date("2024-01-01T00:00:00Z");
    const all = execFileSync("find", [repo, "-not", "-path", "*/.git/*"], { encoding: "buffer" })
      .toString("latin1")
      .split("\n")
      .filter((p) => p);
    for (const p of all) await utimes(Buffer.from(p, "latin1"), stamp, stamp).catch(() => undefined);
  });

  after(async () => {
    if (savedXdg === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = savedXdg;
    await rm(tmp, { recursive: true, force: true });
  });

  it("glob lists the same files on both engines, with the documented ignore and hidden-file rules", async () => {
    const text = await both((e) => tools(e).glob.execute({ pattern: "**/*" }, ctxFor(repo)));
    const listed = text.split("\n");
    expect(listed, text).to.include.members([
      "a/b.txt",
      "a.txt",
      "keep.log",
      "again.ignored",
      ".hidden/inside.txt",
      ".dotfile",
      "blob.bin",
      "src/keep.gen.ts",
      "src/sub/top-only.txt",
      "unicode/été.txt",
      "unicode/𝒳.txt",
      "latin1-\uFFFD.txt",
    ]);
    for (const gone of [
      "build/out.js",
      "debug.log",
      "x.ignored",
      "excluded.txt",
      "g.globalignored",
      "src/x.gen.ts",
      "top-only.txt",
      "link-in.ts",
      "link-out.txt",
    ]) {
      expect(listed, gone).to.not.include(gone);
    }
    expect(text).to.not.include(".git/").and.not.include("secret");
    // Same times: path order, depth first, names in byte order ("a/b.txt" before "a.txt").
    expect(listed.indexOf("a/b.txt")).to.be.lessThan(listed.indexOf("a.txt"));
    expect(listed.indexOf("unicode/\uE000.txt")).to.be.lessThan(listed.indexOf("unicode/𝒳.txt"));
    await both((e) => tools(e).glob.execute({ pattern: "*.ts", path: "src" }, ctxFor(repo)));
    await both((e) => tools(e).glob.execute({ pattern: "*.txt", path: "build" }, ctxFor(repo)));
  });

  it("dates regular files only, by lstat: a directory or a link is null, a path that is gone undefined", async () => {
    const times = await fileTimes(repo, ["a.txt", "a", "link-in.ts", "gone.txt", "a/b.txt"]);
    expect(times).to.deep.equal([
      lstatSync(path.join(repo, "a.txt")).mtimeMs,
      null,
      null,
      undefined,
      lstatSync(path.join(repo, "a/b.txt")).mtimeMs,
    ]);
  });

  it("grep finds the same matches in the same order on both engines", async () => {
    const cases: Array<Record<string, unknown>> = [
      { pattern: "needle" },
      { pattern: "needle", ignoreCase: true, outputMode: "files_with_matches" },
      { pattern: "needle", outputMode: "count" },
      { pattern: "(?i)NEEDLE upper" },
      { pattern: "a.txt", literal: true },
      { pattern: "function\\s+\\w+Sync\\(" },
      { pattern: "\\bfoo\\b" },
      { pattern: "\\Wfoo" },
      { pattern: "foo(?=bar)" },
      { pattern: "(?<!x)foo(?!foo)" },
      { pattern: "(foo)\\1" },
      { pattern: "(?<w>o)\\k<w>" },
      { pattern: "[\\[&~]|caf\\u00e9|\\p{Lu}{3}" },
      { pattern: "line$" },
      { pattern: "^needle \\d+", path: "ctx", context: 1 },
      { pattern: "needle", glob: "*.{ts,log}" },
      { pattern: "needle", path: "build" },
      { pattern: "needle", path: "src/x.gen.ts" },
    ];
    for (const args of cases) {
      const text = await both((e) => tools(e).grep.execute(args, ctxFor(repo)));
      expect(text, JSON.stringify(args)).to.not.include("secret").and.not.include("needle-in-git");
    }
    const plain = await both((e) => tools(e).grep.execute({ pattern: "needle" }, ctxFor(repo)));
    expect(plain).to.include("a/b.txt:1:").and.include(".hidden/inside.txt:1:").and.include("crlf.txt:2:");
    expect(plain).to.include("[Skipped 1 binary file with matches.]").and.not.include("x.ignored");
    expect(plain.indexOf("a/b.txt:1:")).to.be.lessThan(plain.indexOf("a.txt:1:"));
    const words = await both((e) => tools(e).grep.execute({ pattern: "\\bfoo\\b" }, ctxFor(repo)));
    expect(words).to.equal("words.txt:2:foo bar\nwords.txt:5:éfoo");
  });

  it("the session file search gives the same hits on both engines", async () => {
    const signal = new AbortController().signal;
    for (const q of ["needle", "a", "txt", "unicode/", ".hidden", "build", "gen"]) {
      const [rg, js] = await Promise.all(
        ENGINES.map((engine) => searchFiles(repo, q, { maxResults: 50, maxVisited: 20_000, engine }, signal)),
      );
      expect(js, q).to.deep.equal(rg);
    }
    const dirs = await searchFiles(repo, "uni", { maxResults: 50, maxVisited: 20_000 }, signal);
    expect(dirs.results).to.deep.equal([{ path: "unicode", type: "dir" }]);
  });

  it("holds the caps on both engines", async () => {
    const many = path.join(tmp, "many");
    for (let i = 0; i < 40; i++) {
      await mkdir(path.join(many, `d${i % 4}`), { recursive: true });
      await writeFile(path.join(many, `d${i % 4}`, `f${String(i).padStart(2, "0")}.txt`), "hit\nhit\n");
    }
    const grep = await both((e) => tools(e).grep.execute({ pattern: "hit", limit: 3 }, ctxFor(many)));
    expect(grep.split("\n").slice(0, 3)).to.deep.equal(["d0/f00.txt:1:hit", "d0/f00.txt:2:hit", "d0/f04.txt:1:hit"]);
    expect(grep).to.include("[Stopped at 3 matching lines");
    const files = await both((e) =>
      tools(e).grep.execute({ pattern: "hit", outputMode: "files_with_matches", limit: 2 }, ctxFor(many)),
    );
    expect(files.split("\n").slice(0, 3)).to.deep.equal(["d0/f00.txt", "d0/f04.txt", ""]);
    const walked = await both((e) => tools(e, { walkMaxFiles: 5 }).glob.execute({ pattern: "*" }, ctxFor(many)));
    expect(walked.split("\n").slice(0, 5)).to.have.length(5);
    expect(walked).to.include("[The search stopped after 5 files");
    const bytes = await both((e) => tools(e, { grepMaxBytes: 100 }).grep.execute({ pattern: "hit" }, ctxFor(many)));
    expect(bytes).to.include("[Output capped at 100 B");
    const [rg, js] = await Promise.all(
      ENGINES.map((engine) =>
        searchFiles(many, "f", { maxResults: 100, maxVisited: 10, engine }, new AbortController().signal),
      ),
    );
    expect(rg.truncated).to.equal(true);
    expect(js).to.deep.equal(rg);
  });

  it("kills a running ripgrep at once when the turn is aborted", async () => {
    // A stand-in for a search that takes long: it records its pid and waits.
    const fake = path.join(tmp, "slow-rg");
    const pidFile = path.join(tmp, "slow-rg.pid");
    await writeFile(fake, `#!/bin/sh\necho $$ > "${pidFile}"\nexec sleep 600\n`);
    chmodSync(fake, 0o755);
    const saved = process.env[RIPGREP_ENV];
    process.env[RIPGREP_ENV] = fake;
    resetSearchEngine();
    try {
      expect(searchEngine()).to.include({ engine: "ripgrep", path: fake });
      for (const call of ["grep", "glob"] as const) {
        await rm(pidFile, { force: true });
        const ac = new AbortController();
        const ctx = { ...ctxFor(repo), signal: ac.signal };
        const args = call === "grep" ? { pattern: "needle" } : { pattern: "**/*" };
        const running = createFsTools()[call].execute(args, ctx);
        await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", "the search to start");
        const pid = Number(readFileSync(pidFile, "utf8"));
        expect(alive(pid)).to.equal(true);
        ac.abort(new Error("turn aborted"));
        const result = await running;
        expect(result.error?.code, result.content).to.equal("aborted");
        await until(() => !alive(pid), "the search process to be gone");
      }
    } finally {
      if (saved === undefined) delete process.env[RIPGREP_ENV];
      else process.env[RIPGREP_ENV] = saved;
      resetSearchEngine();
    }
  });

  it("GET /server/status says which engine runs", async () => {
    const d = await startTestDaemon();
    try {
      const res = await d.get("/server/status");
      expect(res.status).to.equal(200);
      expect(res.body.search).to.include({ engine: "ripgrep", path: searchEngine().path });
    } finally {
      await d.stop();
    }
  });

  it("uses the JavaScript engine when ripgrep is turned off or missing, and says why", () => {
    const saved = process.env[RIPGREP_ENV];
    try {
      process.env[RIPGREP_ENV] = "off";
      resetSearchEngine();
      expect(searchEngine()).to.deep.equal({ engine: "javascript", reason: `${RIPGREP_ENV}=off` });
      process.env[RIPGREP_ENV] = path.join(tmp, "no-such-rg");
      resetSearchEngine();
      expect(searchEngine().engine).to.equal("javascript");
      expect(searchEngine().reason).to.include("not an executable file");
    } finally {
      if (saved === undefined) delete process.env[RIPGREP_ENV];
      else process.env[RIPGREP_ENV] = saved;
      resetSearchEngine();
    }
  });
});
