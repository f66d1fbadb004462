import { expect } from "chai";
import type { NewMessage } from "../core/session-types.js";
import { at, seedTurns, session, sqliteStoreFixture, texts } from "./support/storage-sqlite.js";

describe("storage-sqlite: SessionStore on SQLite", () => {
  const fx = sqliteStoreFixture();

  describe("messages", () => {
    beforeEach(() => fx.store.createSession(session("s")));

    it("stores every field, assigns seqs and counts only user and texted assistant messages", async () => {
      const before = fx.store.getSession("s")?.updatedAt ?? "";
      const full: NewMessage = {
        role: "assistant",
        content: "done",
        toolCalls: [{ id: "c1", name: "read", arguments: '{"path":"a"}' }],
        thinking: "hmm",
        meta: { turnMeta: { ms: 3 } },
        createdAt: at(9),
      };
      const m1 = await fx.store.appendMessage("s", { role: "user", content: "hi", clientMessageId: "cm-1" });
      const m2 = await fx.store.appendMessage("s", full);
      fx.store.appendMessage("s", {
        role: "assistant",
        content: null,
        toolCalls: [{ id: "c2", name: "ls", arguments: "{}" }],
      });
      fx.store.appendMessage("s", { role: "assistant", content: "  " });
      fx.store.appendMessage("s", {
        role: "tool",
        content: "result",
        toolCallId: "c2",
        toolName: "ls",
        meta: { error: true },
      });
      fx.store.appendMessage("s", { role: "user", content: [{ type: "image_url", image_url: { url: "data:x" } }] });
      fx.store.appendMessage("s", { role: "system", content: "prompt" });
      expect(m1).to.include({ seq: 1, inContext: true, clientMessageId: "cm-1" });
      expect(m2).to.deep.equal({ ...full, seq: 2, inContext: true, createdAt: at(9) });

      const rec = fx.store.getSession("s");
      expect(rec?.messageCount).to.equal(3);
      expect(rec?.updatedAt).to.be.a("string").and.not.equal(before);
      const page = fx.store.historyPage("s", 10);
      expect(page.messages[1]).to.deep.equal(m2);
      expect(page.messages[4]).to.include({ role: "tool", toolCallId: "c2", toolName: "ls" });
      expect(page.messages[4]?.meta).to.deep.equal({ error: true });
      expect(page.messages.map((m) => m.seq)).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
      expect(() => fx.store.appendMessage("missing", { role: "user", content: "x" })).to.throw(/Session not found/);
    });

    it("pages history by user turns, backwards with beforeSeq", () => {
      fx.store.appendMessage("s", { role: "system", content: "prompt" });
      seedTurns(fx.store, "s", 5); // seqs 2..21, turn i starts at 2 + 4i
      const p1 = fx.store.historyPage("s", 2);
      expect(texts(p1.messages)).to.deep.equal(["q3", null, "out", "a3", "q4", null, "out", "a4"]);
      expect(p1).to.include({ oldestSeq: 14, hasMoreHistory: true });
      const p2 = fx.store.historyPage("s", 2, p1.oldestSeq ?? 0);
      expect(texts(p2.messages)).to.deep.equal(["q1", null, "out", "a1", "q2", null, "out", "a2"]);
      expect(p2).to.include({ oldestSeq: 6, hasMoreHistory: true });
      // Fewer turns left than asked for: the page reaches back to the first row (the system prompt).
      const p3 = fx.store.historyPage("s", 2, p2.oldestSeq ?? 0);
      expect(texts(p3.messages)).to.deep.equal(["prompt", "q0", null, "out", "a0"]);
      expect(p3).to.include({ oldestSeq: 1, hasMoreHistory: false });
      expect(fx.store.historyPage("s", 2, 1)).to.deep.equal({ messages: [], oldestSeq: null, hasMoreHistory: false });
      expect(fx.store.historyPage("s", 0).messages).to.have.length(21);
      expect(fx.store.historyPage("s", -1, 6).messages).to.have.length(5);
      expect(fx.store.historyPage("nope", 3)).to.deep.equal({ messages: [], oldestSeq: null, hasMoreHistory: false });
    });

    it("tracks the in-context working set", () => {
      seedTurns(fx.store, "s", 3);
      fx.store.appendMessage("s", { role: "system", content: "summary", inContext: false });
      expect(fx.store.contextMessages("s")).to.have.length(12);
      fx.store.markOutOfContext("s", 4);
      const ctx = fx.store.contextMessages("s");
      expect(ctx.map((m) => m.seq)).to.deep.equal([5, 6, 7, 8, 9, 10, 11, 12]);
      expect(ctx.every((m) => m.inContext)).to.equal(true);
      expect(fx.store.historyPage("s", 10).messages[0]).to.include({ seq: 1, inContext: false });
      fx.store.markOutOfContext("s");
      expect(fx.store.contextMessages("s")).to.deep.equal([]);
      expect(fx.store.historyPage("s", 10).messages).to.have.length(13);
    });

    it("truncates (undo): recounts, unindexes, and never reuses a seq", async () => {
      fx.store.appendMessage("s", { role: "user", content: "alpha question" });
      fx.store.appendMessage("s", { role: "assistant", content: "alpha answer" });
      fx.store.appendMessage("s", { role: "user", content: "beta question", clientMessageId: "b" });
      fx.store.appendMessage("s", { role: "assistant", content: "beta answer" });
      expect(fx.store.getSession("s")?.messageCount).to.equal(4);
      fx.store.truncateMessages("s", 3);
      expect(fx.store.getSession("s")?.messageCount).to.equal(2);
      expect(texts(fx.store.historyPage("s", 10).messages)).to.deep.equal(["alpha question", "alpha answer"]);
      expect(fx.store.searchMessages("beta")).to.deep.equal([]);
      expect(fx.store.hasClientMessageId("s", "b")).to.equal(false);
      expect((await fx.store.appendMessage("s", { role: "user", content: "again" })).seq).to.equal(5);
    });

    it("finds a message by client message id", () => {
      fx.store.appendMessage("s", { role: "user", content: "x", clientMessageId: "abc" });
      fx.store.createSession(session("t"));
      expect(fx.store.hasClientMessageId("s", "abc")).to.equal(true);
      expect(fx.store.hasClientMessageId("s", "abd")).to.equal(false);
      expect(fx.store.hasClientMessageId("t", "abc")).to.equal(false);
    });

    it("searches message text with snippets, newest first, scoped by session", () => {
      fx.store.createSession(session("t", { title: "Second" }));
      const long = `${"filler ".repeat(40)}the quick brown fox jumps ${"filler ".repeat(40)}`;
      fx.store.appendMessage("s", { role: "user", content: long });
      fx.store.appendMessage("t", { role: "assistant", content: "a fox again" });
      fx.store.appendMessage("t", { role: "tool", content: "fox in tool output", toolCallId: "c" });
      const hits = fx.store.searchMessages("fox");
      expect(hits.map((h) => [h.sessionId, h.seq])).to.deep.equal([
        ["t", 1],
        ["s", 1],
      ]);
      expect(hits[0]).to.include({ sessionTitle: "Second", role: "assistant", snippet: "a fox again" });
      expect(hits[1]?.snippet).to.contain("fox").and.contain("…");
      expect(hits[1]?.snippet.length).to.be.lessThan(long.length / 2);
      expect(hits[1]?.sessionTitle).to.equal(null);
      expect(fx.store.searchMessages("quick fox").map((h) => h.sessionId)).to.deep.equal(["s"]);
      expect(fx.store.searchMessages("fox", { sessionId: "s" }).map((h) => h.sessionId)).to.deep.equal(["s"]);
      expect(fx.store.searchMessages("fox", { excludeSessionId: "t" }).map((h) => h.sessionId)).to.deep.equal(["s"]);
      expect(fx.store.searchMessages("fox", { limit: 1 })).to.have.length(1);
      expect(fx.store.searchMessages("  ")).to.deep.equal([]);
    });
  });

  describe("events and feed", () => {
    beforeEach(() => fx.store.createSession(session("s")));
    const ev = (seq: number, ephemeral = false) => ({
      seq,
      ts: at(seq),
      type: ephemeral ? "token" : "x",
      json: `{"seq":${seq}}`,
      ephemeral,
    });

    it("appends batches, ignores duplicate seqs and reads durable-only on request", () => {
      fx.store.appendEvents("s", [ev(1), ev(2, true), ev(3, true), ev(4)]);
      fx.store.appendEvents("s", [ev(4), ev(5)]);
      fx.store.appendEvents("s", []);
      expect(fx.store.readEvents("s", 0, 100).map((e) => e.seq)).to.deep.equal([1, 2, 3, 4, 5]);
      expect(fx.store.readEvents("s", 0, 100)[0]).to.deep.equal({ seq: 1, ts: at(1), type: "x", json: '{"seq":1}' });
      expect(fx.store.readEvents("s", 1, 2).map((e) => e.seq)).to.deep.equal([2, 3]);
      expect(fx.store.readEvents("s", 0, 100, { durableOnly: true }).map((e) => e.seq)).to.deep.equal([1, 4, 5]);
      expect(fx.store.readEvents("s", 5, 100)).to.deep.equal([]);
      expect(fx.store.readEvents("s", 0, 0)).to.deep.equal([]);
    });

    it("keeps the event seq reservation per session", () => {
      expect(fx.store.eventSeqReserved("s")).to.equal(0);
      fx.store.reserveEventSeq("s", 1000);
      expect(fx.store.eventSeqReserved("s")).to.equal(1000);
      expect(fx.store.eventSeqReserved("nope")).to.equal(0);
      expect(() => fx.store.reserveEventSeq("nope", 5)).to.not.throw();
    });

    it("deleting a session removes its messages, events and search rows", () => {
      fx.store.appendMessage("s", { role: "user", content: "zebra" });
      fx.store.appendEvents("s", [ev(1)]);
      fx.store.reserveEventSeq("s", 1000);
      fx.store.deleteSession("s");
      expect(fx.store.readEvents("s", 0, 10)).to.deep.equal([]);
      expect(fx.store.searchMessages("zebra")).to.deep.equal([]);
      fx.store.createSession(session("s"));
      expect(fx.store.historyPage("s", 5).messages).to.deep.equal([]);
      expect(fx.store.eventSeqReserved("s")).to.equal(0);
    });

    it("keeps the global feed in order", () => {
      expect(fx.store.feedSeq()).to.equal(0);
      fx.store.appendFeed({ seq: 1, ts: at(1), type: "session_created", json: "{}" });
      fx.store.appendFeed({ seq: 2, ts: at(2), type: "session_update", json: '{"a":1}' });
      expect(fx.store.feedSeq()).to.equal(2);
      expect(fx.store.readFeed(0, 10).map((e) => e.type)).to.deep.equal(["session_created", "session_update"]);
      expect(fx.store.readFeed(1, 10)).to.deep.equal([{ seq: 2, ts: at(2), type: "session_update", json: '{"a":1}' }]);
      expect(fx.store.readFeed(0, 1)).to.have.length(1);
    });
  });
});
