import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import {
  type Entry,
  type EventFrame,
  initialState,
  loaded,
  reduce,
  type SessionState,
} from "../clients/api/session-state.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, fail, startFakeProvider, text, tools } from "../testing/fake-provider.js";
import type { SseClient } from "../testing/sse.js";

const fold = (frames: EventFrame[], from: SessionState = initialState()) => frames.reduce(reduce, from);
const framesOf = (sse: SseClient): EventFrame[] => sse.frames.map((f) => f.json as EventFrame);
/** The transcript in short: each entry's kind and what it says. */
const short = (entries: readonly Entry[]) =>
  entries.map((e) => {
    switch (e.kind) {
      case "user":
        return `user:${e.text}${e.via ? ` (${e.via})` : ""}`;
      case "assistant":
        return `assistant:${e.text}${e.toolCallIds.length ? ` [${e.toolCallIds.join(",")}]` : ""}`;
      case "error":
        return `error:${e.message}`;
      case "end":
        return `end:${e.reason}${e.interrupted.length ? ` interrupted ${e.interrupted.join(",")}` : ""}`;
      case "resolved":
        return `resolved:${e.allowed ? "allowed" : "denied"} by ${e.by}: ${e.command}`;
      case "turn_meta":
        return `turn_meta:${e.model}`;
      case "stored":
        return `stored:${e.message.role}:${e.message.content ?? ""}`;
      default:
        return e.kind;
    }
  });

/** The shared reducer every client folds the session's stream with, fed with the frames the real daemon sends. */
describe("client reducer: one session's stream folded into its state", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let cwd: string;

  beforeEach(async () => {
    fake = await startFakeProvider();
    d = await startTestDaemon({ config: { provider: { baseURL: fake.url, apiKey: "k", model: "fake-model" } } });
    cwd = realpathSync(mkdtempSync(join(tmpdir(), "agentd-reducer-")));
    writeFileSync(join(cwd, "a.txt"), "a");
  });
  afterEach(async () => {
    await d.cleanup();
    await fake.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  /** Runs one turn; its frames are read from the session's stream until the session is idle again. */
  const turn = async (id: string, message: string, sse: SseClient) => {
    const from = sse.frames.length;
    expect((await d.post(`/sessions/${id}/chat`, { text: message })).status).to.equal(202);
    await sse.waitFor((f) => f.json?.type === "status" && f.json.status === "idle", 10_000, from + 1);
    // The summary that states it idle follows once the session's updatedAt is stored: the turn's last frame.
    await sse.waitFor((f) => f.json?.type === "session_update" && f.json.session?.status === "idle", 10_000, from + 1);
  };
  /** A new session and its stream, after one turn: the frames folded, and the session read back. */
  const oneTurn = async (message: string) => {
    const id = await d.createSession({ cwd });
    const sse = await d.sse(`/sessions/${id}/events`);
    await turn(id, message, sse);
    sse.close();
    return { live: fold(framesOf(sse)), read: loaded(initialState(), (await d.get(`/sessions/${id}`)).body) };
  };

  it("a tool turn: the call, its result and the answer, in order, and nothing left running", async () => {
    fake.script(tools([{ name: "ls", args: {}, id: "l1" }], { before: [{ content: "Looking." }] }), text("Two files."));
    const { live: s, read } = await oneTurn("what is here?");
    expect(short(s.transcript)).to.deep.equal([
      "user:what is here?",
      "assistant:Looking. [l1]",
      "assistant:Two files.",
      "turn_meta:fake-model",
      "end:stop",
    ]);
    expect(s.tools.l1).to.include({ name: "ls", status: "ok" });
    expect(s.tools.l1?.result).to.contain("a.txt");
    expect(s).to.include({ status: "idle", liveText: "", liveThinking: "" });
    expect(s.running).to.deep.equal([]);
    expect(s.startedAt).to.equal(undefined);
    // Read back, the same turn is the stored history (with the call's result), and nothing is pending.
    expect(short(read.transcript)).to.deep.equal([
      "stored:user:what is here?",
      "stored:assistant:Looking.",
      "stored:assistant:Two files.",
    ]);
    expect(read.tools.l1).to.include({ status: "ok", result: s.tools.l1?.result });
    expect(read.lastSeq).to.equal(s.lastSeq);
  });

  it("a failed turn: the error, then the end, and the state is idle", async () => {
    fake.script(fail(400, { body: { error: { message: "bad request" } } }));
    const { live: s, read } = await oneTurn("hello");
    expect(short(s.transcript)).to.deep.equal([
      "user:hello",
      "error:provider rejected the request (400): bad request",
      "turn_meta:fake-model",
      "end:error",
    ]);
    expect(s.status).to.equal("idle");
    // Read back: why the turn failed follows its message.
    expect(short(read.transcript)).to.deep.equal([
      "stored:user:hello",
      "error:provider rejected the request (400): bad request",
    ]);
  });

  it("a confirmation: pending while asked, then resolved with its command, and the denied call failed", async () => {
    const id = await d.createSession({ cwd });
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(tools([{ name: "bash", args: { command: "rm -rf ./build" }, id: "b1" }]), text("Left it."));
    expect((await d.post(`/sessions/${id}/chat`, { text: "clean" })).status).to.equal(202);
    const ask = (await sse.waitForType("bash_confirm")).json;
    const asking = fold(framesOf(sse));
    expect(asking.status).to.equal("running");
    expect(asking.running).to.deep.equal(["b1"]);
    expect(asking.confirmations.map((c) => [c.id, c.tool, c.command])).to.deep.equal([
      [ask.id, "bash", "rm -rf ./build"],
    ]);
    // A client that connects now is told the pending confirmation by the stream's first frame.
    const late = await d.sse(`/sessions/${id}/events`);
    await late.waitForType("status");
    expect(fold(framesOf(late)).confirmations.map((c) => c.id)).to.deep.equal([ask.id]);
    late.close();

    expect((await d.post(`/sessions/${id}/bash-confirm`, { id: ask.id, allow: false })).status).to.equal(202);
    await sse.waitForType("end");
    await sse.waitFor((f) => f.json?.type === "status" && f.json.status === "idle");
    const s = fold(framesOf(sse));
    expect(s.confirmations).to.deep.equal([]);
    expect(short(s.transcript)).to.deep.equal([
      "user:clean",
      "assistant: [b1]",
      "resolved:denied by user: rm -rf ./build",
      "assistant:Left it.",
      "turn_meta:fake-model",
      "end:stop",
    ]);
    expect(s.tools.b1?.status).to.equal("error");
    sse.close();
  });

  it("a replay after a reconnect: frames already applied are skipped, nothing is shown twice", async () => {
    const id = await d.createSession({ cwd });
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(text("One."), text("Two."));
    await turn(id, "first", sse);
    await turn(id, "second", sse);
    const once = fold(framesOf(sse));
    // Reconnected from an older id (a client that lost track of where it was): the daemon replays from there.
    const firstUser = sse.frames.find((f) => f.json?.type === "user_message");
    const again = await d.sse(`/sessions/${id}/events`, { lastEventId: Number(firstUser?.id) - 1 });
    await again.waitFor((f) => Number(f.id) >= once.lastSeq);
    const replayed = framesOf(again);
    expect(replayed.filter((f) => f.type === "user_message")).to.have.length(2);
    const twice = fold(replayed, once);
    expect(short(twice.transcript)).to.deep.equal(short(once.transcript));
    expect(short(once.transcript)).to.deep.equal([
      "user:first",
      "assistant:One.",
      "turn_meta:fake-model",
      "end:stop",
      "user:second",
      "assistant:Two.",
      "turn_meta:fake-model",
      "end:stop",
    ]);
    again.close();
    sse.close();
  });

  it("a queued follow-up announced, then started as its own turn, is one user message", () => {
    const s = fold([
      { type: "status", status: "running", startedAt: 5, lastSeq: 1 },
      { type: "user_message", seq: 2, message: { role: "user", content: "go", seq: 1 } },
      { type: "steering_injected", seq: 3, messages: [{ role: "user", content: "also tests", seq: 2 }] },
      { type: "followup_injected", seq: 4, messages: [{ role: "user", content: "then docs", seq: 3 }] },
      { type: "user_message", seq: 5, message: { role: "user", content: "then docs", seq: 3 } },
      { type: "tool_start", seq: 6, id: "t9", name: "read", args: "{}" },
      { type: "retry", seq: 7, attempt: 1, delayMs: 1000, reason: "503" },
      { type: "end", seq: 8, reason: "aborted" },
    ]);
    expect(short(s.transcript)).to.deep.equal([
      "user:go",
      "user:also tests (steering)",
      "user:then docs (followup)",
      "assistant: [t9]",
      "end:aborted interrupted t9",
    ]);
    expect(s.retry).to.equal(undefined);
    expect(s.startedAt).to.equal(5);
  });
});
