import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { expect } from "chai";
import { spawnDaemon, startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools, turn } from "../testing/fake-provider.js";
import { gitIn, makeRepo, repoState } from "./support/git-repo.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

const read = (dir: string, file: string) => readFileSync(join(dir, file), "utf8");

describe("a git worktree per session", function () {
  this.timeout(60_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let repo: string;
  let hookDir: string;

  beforeEach(async () => {
    fake = await startFakeProvider();
    hookDir = realpathSync(mkdtempSync(join(tmpdir(), "agentd-hook-")));
    // A global WorktreeCreate hook (argv, no shell) leaving a marker with what it got on stdin.
    const hook = join(hookDir, "on-worktree.sh");
    writeFileSync(hook, '#!/bin/sh\ncat > "$PWD/.hook-ran"\n');
    chmodSync(hook, 0o755);
    d = await startTestDaemon({
      config: {
        provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" },
        hooks: { WorktreeCreate: [{ command: [hook] }] },
      },
    });
    repo = makeRepo({ "shared.txt": "base\n", "x.txt": "x\n", ".gitignore": ".env\n.hook-ran\n" });
  });
  afterEach(async () => {
    fake.clearScript();
    await d.cleanup();
    await fake.close();
    rmSync(repo, { recursive: true, force: true });
    rmSync(hookDir, { recursive: true, force: true });
  });

  const create = (body: Json) => d.post<Json>("/sessions", body);
  async function worktreeSession(body: Json = {}) {
    const res = await create({ cwd: repo, worktree: true, ...body });
    expect(res.status, res.text).to.equal(201);
    return { id: res.body.id as string, wt: res.body.session.worktree as Json };
  }
  const command = (id: string, line: string) => d.post<Json>(`/sessions/${id}/command`, { command: line });

  it("creates the worktree on a new branch, copies worktree-include files and runs the hook", async () => {
    mkdirSync(join(repo, ".agentd"));
    writeFileSync(join(repo, ".agentd", "worktree-include"), ".env\n");
    writeFileSync(join(repo, ".env"), "SECRET=1\n");
    // A project hook of an untrusted project does not run.
    writeFileSync(join(repo, ".agentd", "hooks.json"), JSON.stringify({ worktree: [{ command: ["/bin/false"] }] }));
    const { id, wt } = await worktreeSession();
    expect(wt).to.deep.equal({
      path: join(d.home, "worktrees", `${repo.split("/").at(-1)}-${id}`),
      branch: `agentd/${id}`,
      base: "main",
      repository: repo,
    });
    const view = (await d.get<Json>(`/sessions/${id}`)).body;
    expect(view.cwd).to.equal(wt.path);
    expect(view.worktree).to.deep.equal(wt);
    const listed = (await d.get<Json[]>("/sessions")).body.find((s: Json) => s.id === id);
    expect(listed.worktree).to.deep.equal(wt);
    expect(gitIn(repo, "worktree", "list", "--porcelain")).to.include(`worktree ${wt.path}\n`);
    expect(gitIn(wt.path, "rev-parse", "--abbrev-ref", "HEAD").trim()).to.equal(`agentd/${id}`);
    expect(read(wt.path, ".env")).to.equal("SECRET=1\n");
    const hookInput = JSON.parse(read(wt.path, ".hook-ran"));
    expect(hookInput).to.deep.include({ hook_event_name: "WorktreeCreate", session_id: id, cwd: wt.path });
    expect(hookInput.worktree).to.deep.equal(wt);
    const notices = (await d.get<Json>(`/sessions/${id}/events/history`)).body.events.filter(
      (e: Json) => e.type === "notice",
    );
    expect(notices, "the untrusted project's failing hook must not have run").to.deep.equal([]);
    // Another base and branch name.
    gitIn(repo, "branch", "feature");
    const other = await worktreeSession({ worktree: { branch: "my-work", base: "feature" } });
    expect(other.wt).to.include({ branch: "my-work", base: "feature" });
  });

  it("refuses bad input with 400 and leaves the repository as it was", async () => {
    const outside = realpathSync(mkdtempSync(join(tmpdir(), "agentd-nogit-")));
    try {
      const before = repoState(repo);
      const sessionsBefore = (await d.get<Json[]>("/sessions")).body.length;
      const cases: Array<[Json, RegExp]> = [
        [{ cwd: outside, worktree: true }, /Not inside a git repository/],
        [{ cwd: repo, worktree: { branch: "bad..name" } }, /refuses the branch name/],
        [{ cwd: repo, worktree: { branch: "-x" } }, /refuses the branch name/],
        [{ cwd: repo, worktree: { branch: "main" } }, /already exists/],
        [{ cwd: repo, worktree: { base: "no-such-branch" } }, /Not a branch or commit/],
        [{ cwd: repo, worktree: { nope: 1 } }, /./],
        [{ cwd: "sandbox", worktree: true }, /sandbox/],
      ];
      for (const [body, error] of cases) {
        const res = await create(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error).to.match(error);
      }
      expect(repoState(repo)).to.equal(before);
      expect((await d.get<Json[]>("/sessions")).body).to.have.length(sessionsBefore);
      expect(existsSync(join(d.home, "worktrees")) ? gitIn(repo, "worktree", "list").split("\n").length : 2).to.equal(
        2,
      );
      // /worktree new with a bad branch on a plain session: 400, nothing made.
      const id = await d.createSession({ cwd: repo });
      expect((await command(id, "/worktree new main")).status).to.equal(400);
      expect((await command(id, "/worktree merge")).status).to.equal(409);
      expect(repoState(repo)).to.equal(before);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("lets two worktree sessions edit the same file at once without interference", async () => {
    const a = await worktreeSession();
    const b = await worktreeSession();
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const asks = (word: string) => (body: Json) => JSON.stringify(body.messages).includes(word);
    fake.scriptFor(
      asks("edit as A"),
      tools([{ name: "write", args: { path: "shared.txt", content: "from A\n" } }], { before: [{ waitFor: held }] }),
      text("A done"),
    );
    fake.scriptFor(
      asks("edit as B"),
      tools([{ name: "write", args: { path: "shared.txt", content: "from B\n" } }]),
      text("B done"),
    );
    const sa = await d.sse(`/sessions/${a.id}/events`);
    const sb = await d.sse(`/sessions/${b.id}/events`);
    expect((await d.post(`/sessions/${a.id}/chat`, { text: "edit as A" })).status).to.equal(202);
    expect((await d.post(`/sessions/${b.id}/chat`, { text: "edit as B" })).status).to.equal(202);
    await sb.waitForType("end", 20_000);
    // B finished while A's turn was still running.
    expect((await d.get<Json>(`/sessions/${a.id}`)).body.status).to.equal("running");
    expect(read(b.wt.path, "shared.txt")).to.equal("from B\n");
    release();
    await sa.waitForType("end", 20_000);
    sa.close();
    sb.close();
    expect(read(a.wt.path, "shared.txt")).to.equal("from A\n");
    expect(read(b.wt.path, "shared.txt")).to.equal("from B\n");
    expect(read(repo, "shared.txt")).to.equal("base\n");
    expect(gitIn(repo, "status", "--porcelain")).to.equal("");
  });

  it("merges fast-forward, then with a merge commit; refuses conflicts and a dirty checkout untouched", async () => {
    const s = await worktreeSession();
    writeFileSync(join(s.wt.path, "new.txt"), "new\n");
    const ff = await d.post<Json>(`/sessions/${s.id}/worktree/merge`);
    expect(ff.status, ff.text).to.equal(200);
    expect(ff.body).to.include({ merged: true, fastForward: true, committed: true });
    expect(ff.body.files).to.deep.equal(["new.txt"]);
    expect(read(repo, "new.txt")).to.equal("new\n");
    expect(gitIn(repo, "status", "--porcelain")).to.equal("");
    expect(gitIn(s.wt.path, "status", "--porcelain")).to.equal("");

    // The base moved on meanwhile: a merge commit.
    writeFileSync(join(repo, "main-only.txt"), "main\n");
    gitIn(repo, "add", "-A");
    gitIn(repo, "commit", "-q", "-m", "main work");
    writeFileSync(join(s.wt.path, "wt-only.txt"), "wt\n");
    const merged = await command(s.id, "/worktree merge");
    expect(merged.status, merged.text).to.equal(200);
    expect(merged.body.data).to.include({ merged: true, fastForward: false });
    expect(gitIn(repo, "rev-list", "--parents", "-n", "1", "HEAD").trim().split(" ")).to.have.length(3);
    expect(read(repo, "wt-only.txt")).to.equal("wt\n");

    // A conflict: 409 with the paths; the main checkout and the worktree are left as they were.
    writeFileSync(join(repo, "x.txt"), "main side\n");
    gitIn(repo, "commit", "-q", "-am", "x on main");
    writeFileSync(join(s.wt.path, "x.txt"), "worktree side\n");
    const before = repoState(repo);
    const wtBefore = repoState(s.wt.path);
    const conflict = await d.post<Json>(`/sessions/${s.id}/worktree/merge`);
    expect(conflict.status).to.equal(409);
    expect(conflict.body).to.include({ code: "merge_conflict" });
    expect(conflict.body.paths).to.deep.equal(["x.txt"]);
    expect(repoState(repo)).to.equal(before);
    expect(repoState(s.wt.path)).to.equal(wtBefore);
    expect(read(repo, "x.txt")).to.equal("main side\n");

    // Uncommitted changes of the main checkout to a merged path: 409, nothing changes.
    writeFileSync(join(s.wt.path, "x.txt"), "main side\n");
    writeFileSync(join(s.wt.path, "shared.txt"), "worktree edit\n");
    writeFileSync(join(repo, "shared.txt"), "uncommitted in main\n");
    const dirtyBefore = repoState(repo);
    const dirty = await d.post<Json>(`/sessions/${s.id}/worktree/merge`);
    expect(dirty.status).to.equal(409);
    expect(dirty.body).to.include({ code: "checkout_dirty" });
    expect(dirty.body.paths).to.deep.equal(["shared.txt"]);
    expect(repoState(repo)).to.equal(dirtyBefore);
    expect(read(repo, "shared.txt")).to.equal("uncommitted in main\n");

    // The diff against the base, for the clients.
    const diff = (await d.get<Json>(`/sessions/${s.id}/worktree`)).body;
    expect(diff.files).to.deep.include({ path: "shared.txt", status: "M" });
    expect(diff.patch).to.include("+worktree edit");

    // Refused while a turn runs.
    let release!: () => void;
    fake.script(turn({ content: "working" }, { waitFor: new Promise<void>((r) => (release = r)) }));
    const sse = await d.sse(`/sessions/${s.id}/events`);
    await d.post(`/sessions/${s.id}/chat`, { text: "busy" });
    await sse.waitFor((f) => f.json?.type === "token");
    expect((await d.post<Json>(`/sessions/${s.id}/worktree/merge`)).status).to.equal(409);
    expect((await d.delete<Json>(`/sessions/${s.id}/worktree`)).status).to.equal(409);
    release();
    await sse.waitForType("end");
    sse.close();

    // Discard: the worktree and its branch go, the session is back in the main checkout.
    const discarded = await command(s.id, "/worktree discard");
    expect(discarded.status, discarded.text).to.equal(200);
    expect(existsSync(s.wt.path)).to.equal(false);
    expect(gitIn(repo, "branch", "--list", s.wt.branch)).to.equal("");
    expect(gitIn(repo, "worktree", "list", "--porcelain")).not.to.include(s.wt.path);
    const view = (await d.get<Json>(`/sessions/${s.id}`)).body;
    expect(view.cwd).to.equal(repo);
    expect(view.worktree).to.equal(undefined);
    // /worktree new moves it into a fresh one.
    const moved = await command(s.id, "/worktree new second-try");
    expect(moved.status, moved.text).to.equal(200);
    expect(moved.body.data.worktree.branch).to.equal("second-try");
    expect((await d.get<Json>(`/sessions/${s.id}`)).body.cwd).to.equal(moved.body.data.worktree.path);
  });

  it("gives a fork its own worktree from the source's current state; permanent deletion removes it", async () => {
    const s = await worktreeSession();
    writeFileSync(join(s.wt.path, "shared.txt"), "uncommitted in source\n");
    writeFileSync(join(s.wt.path, "untracked.txt"), "new in source\n");
    const fork = await d.post<Json>(`/sessions/${s.id}/fork`);
    expect(fork.status, fork.text).to.equal(201);
    const fwt = fork.body.session.worktree;
    expect(fwt.path).not.to.equal(s.wt.path);
    expect(fwt).to.include({ branch: `agentd/${fork.body.id}`, base: "main", repository: repo });
    expect(fork.body.session.cwd).to.equal(fwt.path);
    expect(read(fwt.path, "shared.txt")).to.equal("uncommitted in source\n");
    expect(read(fwt.path, "untracked.txt")).to.equal("new in source\n");
    writeFileSync(join(fwt.path, "shared.txt"), "fork edit\n");
    expect(read(s.wt.path, "shared.txt")).to.equal("uncommitted in source\n");

    expect((await d.delete(`/sessions/${fork.body.id}/permanent`)).status).to.equal(200);
    expect(existsSync(fwt.path)).to.equal(false);
    expect(gitIn(repo, "branch", "--list", fwt.branch)).to.equal("");
    expect(gitIn(repo, "worktree", "list", "--porcelain")).not.to.include(fwt.path);
    expect(existsSync(s.wt.path)).to.equal(true);
  });
});

describe("worktree cleanup after a crash", function () {
  this.timeout(60_000);

  it("removes the worktrees of sessions that no longer exist when the daemon starts after a SIGKILL", async () => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), "agentd-wt-crash-")));
    const repo = makeRepo({ "a.txt": "a\n" });
    try {
      const p = await spawnDaemon(home);
      const kept = await p.client.post<Json>("/sessions", { cwd: repo, worktree: true });
      const lost = await p.client.post<Json>("/sessions", { cwd: repo, worktree: true });
      expect([kept.status, lost.status]).to.deep.equal([201, 201]);
      p.child.kill("SIGKILL");
      await p.exited;
      // The crash came after the session's rows were deleted and before its worktree was.
      const db = new Database(join(home, "agentd.db"));
      db.prepare("DELETE FROM sessions WHERE id = ?").run(lost.body.id);
      db.close();
      const lostPath = lost.body.session.worktree.path as string;
      expect(existsSync(lostPath)).to.equal(true);

      const p2 = await spawnDaemon(home);
      try {
        expect(existsSync(lostPath)).to.equal(false);
        expect(gitIn(repo, "branch", "--list", `agentd/${lost.body.id}`)).to.equal("");
        const list = gitIn(repo, "worktree", "list", "--porcelain");
        expect(list).not.to.include(lostPath);
        expect(list).to.include(kept.body.session.worktree.path);
        expect((await p2.client.get<Json>(`/sessions/${kept.body.id}`)).body.worktree).to.deep.equal(
          kept.body.session.worktree,
        );
      } finally {
        p2.child.kill("SIGTERM");
        await p2.exited;
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
