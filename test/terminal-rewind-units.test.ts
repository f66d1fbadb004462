import { expect } from "chai";
import { describeRewind, previewLines } from "../clients/terminal/rewind.js";
import { SessionView } from "../clients/terminal/ui/store.js";
import { refusal, worktreeReply } from "../clients/terminal/worktree.js";

describe("terminal client: rewind and worktree texts", () => {
  it("a rewind event draws the transcript anew from its messages, with what happened to the files", () => {
    const v = new SessionView();
    v.load({
      id: "s1",
      cwd: "/w",
      persona: "default",
      model: "m",
      mode: "build",
      status: "idle",
      messages: [
        { role: "user", content: "first" },
        { role: "assistant", content: "one" },
        { role: "user", content: "second" },
        { role: "assistant", content: "two" },
      ],
      worktree: { branch: "agentd/s1" },
    });
    expect(v.redraws).to.equal(0);
    v.apply({
      type: "rewind",
      fromSeq: 3,
      restore: "both",
      filesRestored: true,
      restored: ["a.txt"],
      removed: ["b.txt"],
      messages: [
        { role: "user", content: "first" },
        { role: "assistant", content: "one" },
      ],
    });
    expect(v.redraws).to.equal(1);
    expect(v.items.map((i) => ("text" in i ? i.text : i.line))).to.deep.equal([
      "session s1 · /w · worktree branch agentd/s1",
      "first",
      "one",
      "rewound to message 3 (both): restored a.txt; removed b.txt · /redo undoes it",
    ]);
    expect(describeRewind({ type: "redo", restore: "conversation", filesRestored: false })).to.equal(
      "rewind undone (conversation): files unchanged",
    );
  });

  it("a session_update moves the view to the worktree's directory and branch, and back", () => {
    const v = new SessionView();
    v.load({ id: "s1", cwd: "/repo", persona: "p", model: "m", mode: "build", status: "idle", messages: [] });
    v.apply({ type: "session_update", session: { cwd: "/wt", worktree: { branch: "feature-x" } } });
    expect(v.session).to.include({ cwd: "/wt", branch: "feature-x" });
    v.apply({ type: "session_update", session: { cwd: "/repo" } });
    expect(v.session).to.include({ cwd: "/repo", branch: undefined });
  });

  it("the restore picker says which files a code rewind changes, or why it cannot", () => {
    expect(previewLines({ available: true, created: ["n.txt"], modified: ["a.txt"], deleted: [] })).to.deep.equal([
      "restored: a.txt",
      "removed: n.txt",
    ]);
    expect(previewLines({ available: true, created: [], modified: [], deleted: [] })).to.deep.equal([
      "No file would change.",
    ]);
    expect(previewLines({ available: false, reason: "pruned", created: [], modified: [], deleted: [] })).to.deep.equal([
      "The files cannot be restored: pruned",
    ]);
  });

  it("/worktree says where the session works; a refused merge lists its files", () => {
    const own = { path: "/h/wt/r-s1", branch: "agentd/s1", base: "main", repository: "/r" };
    const worktrees = [
      { path: "/r", branch: "main" },
      { path: "/h/wt/r-s1", branch: "agentd/s1" },
    ];
    expect(worktreeReply("list", { worktrees, session: own }, "2 worktree(s)").split("\n")).to.deep.equal([
      "This session works in its own worktree on branch agentd/s1 (base main): /h/wt/r-s1",
      "2 worktree(s) of the repository:",
      "  · main  /r",
      "  ● agentd/s1  /h/wt/r-s1",
    ]);
    expect(worktreeReply("list", { worktrees: [] }, "Not a git repository")).to.match(/main checkout[^\n]*\nNot a git/);
    expect(worktreeReply("merge", {}, "Merged")).to.equal("Merged");
    expect(refusal({ error: "conflicts", code: "merge_conflict", paths: ["a", "b"] }, 409).split("\n")).to.deep.equal([
      "merge refused: 2 file(s) conflict; nothing was changed. Conflicting paths:",
      "  ✗ a",
      "  ✗ b",
    ]);
    expect(refusal({ error: "A turn is running" }, 409)).to.equal("A turn is running");
    expect(refusal(undefined, 500)).to.equal("HTTP 500");
  });
});
