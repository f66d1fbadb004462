import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { agentd } from "./support/cli.js";
import { text, tools } from "./support/fake-provider.js";
import { gitIn, makeRepo, repoState } from "./support/git-repo.js";
import { terminalWorld } from "./support/terminal-fixture.js";
import type { TmuxPane } from "./support/tmux.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

/** `/rewind` (picker), `/redo`, `/worktree` and `agentd --worktree` in the interactive client, in a real terminal. */
describe("terminal client: rewind and worktrees (tmux)", function () {
  this.timeout(60_000);
  const w = terminalWorld();
  const { chat, send } = w;
  let repo: string;
  beforeEach(() => {
    repo = makeRepo({ "x.txt": "x\n", "shared.txt": "base\n" });
  });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  const sessions = async () => (await w.d.get<Json[]>("/sessions")).body;
  /** A turn that writes `file` with `content`, then answers `answer`. */
  const writes = (file: string, content: string, answer: string) =>
    w.fake.script(tools([{ name: "write", args: { path: file, content } }]), text(answer));
  const turn = async (p: TmuxPane, prompt: string, answer: string) => {
    await send(p, prompt);
    await p.waitFor(answer);
    await p.waitFor((s) => s.includes("ask anything"));
  };

  it("/rewind picks a message, shows the files, rewinds code and conversation; /redo undoes it", async () => {
    writeFileSync(join(w.cwd, "a.txt"), "original\n");
    const p = await chat();
    writes("a.txt", "one\n", "done-one");
    await turn(p, "first change", "done-one");
    w.fake.script(
      tools([
        { name: "write", args: { path: "a.txt", content: "two\n" } },
        { name: "write", args: { path: "b.txt", content: "new\n" } },
      ]),
      text("done-two"),
    );
    await turn(p, "second change", "done-two");
    writes("a.txt", "three\n", "done-three");
    await turn(p, "third change", "done-three");

    await send(p, "/rewind");
    const list = await p.waitFor("Rewind to which of your messages?");
    // The most recent first: third, second, first.
    const order = ["third change", "second change", "first change"].map((t) => list.lastIndexOf(t));
    expect(order[0]).to.be.below(order[1] as number);
    expect(order[1]).to.be.below(order[2] as number);
    await p.keys("Down");
    await p.keys("Enter");
    const modes = await p.waitFor("restore what?");
    expect(modes).to.include("restored: a.txt").and.include("removed: b.txt");
    expect(modes).to.include("code and conversation").and.include("code only").and.include("conversation only");
    await p.keys("Enter");
    // The transcript is drawn again without the second and third messages, with what happened to the files.
    const after = await p.waitFor("· /redo undoes it");
    expect(after).to.match(/rewound to message \d+ \(both\): restored a\.txt; removed b\.txt/);
    expect(after).to.include("› first change").and.not.include("second change").and.not.include("third change");
    expect(readFileSync(join(w.cwd, "a.txt"), "utf8")).to.equal("one\n");
    expect(existsSync(join(w.cwd, "b.txt"))).to.equal(false);

    const printed = await p.record();
    await send(p, "/redo");
    // The note and the transcript drawn again from the redo event: one screen may show the first before the second.
    const redone = await p.waitFor((s) => s.includes("rewind undone (both)") && s.includes("› third change"));
    expect(redone).to.include("› second change").and.include("› third change");
    // The screen is cleared before the transcript is printed again: never the restored messages below the old
    // transcript first (which a capture of the screen could catch between the two).
    const raw = await printed("rewind undone (both)");
    expect(raw.indexOf("\x1b[2J")).to.be.above(-1).and.below(raw.indexOf("done-two"));
    expect(readFileSync(join(w.cwd, "a.txt"), "utf8")).to.equal("three\n");
    expect(readFileSync(join(w.cwd, "b.txt"), "utf8")).to.equal("new\n");
  });

  it("/rewind can keep the files (conversation only), and Esc leaves everything as it was", async () => {
    const p = await chat();
    writes("a.txt", "one\n", "done-one");
    await turn(p, "first change", "done-one");
    await send(p, "/rewind");
    await p.waitFor("Rewind to which of your messages?");
    await p.keys("Escape");
    await p.waitFor((s) => !s.includes("Rewind to which") && s.includes("ask anything"));
    expect((await sessions())[0].messageCount).to.be.above(1);

    await send(p, "/rewind");
    await p.waitFor("Rewind to which of your messages?");
    await p.keys("Enter");
    await p.waitFor("conversation only");
    await p.keys("3");
    await p.waitFor(/rewound to message \d+ \(conversation\): files unchanged/);
    expect(readFileSync(join(w.cwd, "a.txt"), "utf8")).to.equal("one\n");
    expect((await sessions())[0].messageCount).to.equal(0);
  });

  it("agentd --worktree starts in a new worktree; /worktree shows it; a conflicting merge names the files", async () => {
    const p = await chat(["--cwd", repo, "--worktree"]);
    const [s] = await sessions();
    expect(s.worktree.branch).to.equal(`agentd/${s.id}`);
    // The status line and the session's header line (drawn once the session's summary is read; it wraps when the
    // temporary path is long): both name it.
    const flat = (x: string) => x.replace(/\s+/g, " ");
    const screen = await p.waitFor(
      (x) => x.includes(`⎇ agentd/${s.id}`) && flat(x).includes(`worktree branch agentd/${s.id}`),
    );
    expect(flat(screen)).to.include(s.worktree.path);

    await send(p, "/worktree");
    await p.waitFor(`This session works in its own worktree on branch agentd/${s.id} (base main)`);
    await p.waitFor("2 worktree(s) of the repository:");

    writes("x.txt", "from the session\n", "edited");
    await turn(p, "edit x", "edited");
    writeFileSync(join(repo, "x.txt"), "from main\n");
    gitIn(repo, "commit", "-q", "-am", "x on main");
    const before = repoState(repo);
    await send(p, "/worktree merge");
    const refused = await p.waitFor("Conflicting paths:");
    expect(refused).to.include("merge refused: 1 file(s) conflict; nothing was changed.").and.include("✗ x.txt");
    expect(repoState(repo)).to.equal(before);

    await send(p, "/worktree discard");
    await p.waitFor(`Worktree removed; back in ${repo}`);
    await p.waitFor((x) => !x.split("\n").some((l) => l.includes("⎇")));
    expect(gitIn(repo, "branch", "--list")).to.not.include("agentd/");
    expect(existsSync(s.worktree.path)).to.equal(false);
  });

  it("/worktree new BRANCH moves the session; /worktree merge brings its work into main", async () => {
    const p = await chat(["--cwd", repo]);
    await send(p, "/worktree");
    await p.waitFor("This session works in the main checkout");
    await send(p, "/worktree new feature-x");
    await p.waitFor(/Working in \S+ on feature-x/);
    await p.waitFor("⎇ feature-x");
    writes("new.txt", "made in the worktree\n", "written");
    await turn(p, "make a file", "written");
    expect(existsSync(join(repo, "new.txt"))).to.equal(false);
    await send(p, "/worktree merge");
    await p.waitFor("Merged into main (fast-forward, 1 file(s))");
    expect(readFileSync(join(repo, "new.txt"), "utf8")).to.equal("made in the worktree\n");
  });

  it("agentd --worktree BRANCH names the branch; a quoted prompt after --worktree stays the prompt", async () => {
    const p = await chat(["--cwd", repo, "--worktree", "fix-login"]);
    await p.waitFor("⎇ fix-login");
    await p.kill();
    w.fake.script(text("prompt answered"));
    const q = await chat(["--cwd", repo, "--worktree", "say hello please"]);
    await q.waitFor("prompt answered");
    const mine = (await sessions()).find((x: Json) => x.worktree?.branch?.startsWith("agentd/"));
    expect(mine, "a session on the default branch").to.not.equal(undefined);
    expect(JSON.stringify(w.fake.requests.at(-1))).to.include("say hello please");
  });

  describe("CLI", () => {
    it("--worktree outside git is refused with the daemon's reason, and no session is made", async () => {
      const run = agentd(w.d.home, ["run", "--worktree", "--cwd", w.cwd, "hello"]);
      expect(await run.exited).to.equal(1);
      expect(run.stderr()).to.match(/git/i);
      expect(await sessions()).to.deep.equal([]);
    });

    it("--worktree with --continue is refused: it always starts a new session", async () => {
      const run = agentd(w.d.home, ["run", "--worktree", "--continue", "--cwd", repo, "hello"]);
      expect(await run.exited).to.equal(1);
      expect(run.stderr()).to.include("--worktree starts a new session");
      expect(await sessions()).to.deep.equal([]);
    });
  });
});
