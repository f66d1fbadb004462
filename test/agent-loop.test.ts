import { rmSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { definePlugin, T, type ToolContext } from "../core/index.js";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, fail, startFakeProvider, text, tokens, tools, turn } from "../testing/fake-provider.js";
import type { SseClient } from "../testing/sse.js";

/** What the test tools saw: start/end times per call, for ordering and concurrency checks. */
interface Span {
  name: string;
  label: string;
  start: number;
  end: number;
}

function probeTools(spans: Span[], gates: Map<string, Promise<void>>) {
  const sleep = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const t = setTimeout(done, ms);
      signal.addEventListener("abort", done);
    });
  const body = (name: string) => async (args: Record<string, unknown>, ctx: ToolContext) => {
    const span = { name, label: String(args.label), start: performance.now(), end: 0 };
    spans.push(span);
    ctx.emit({ type: "probe_started", label: span.label });
    const gate = gates.get(String(args.label));
    if (gate) await Promise.race([gate, sleep(60_000, ctx.signal)]);
    else await sleep(Number(args.ms ?? 0), ctx.signal);
    span.end = performance.now();
    if (ctx.signal.aborted)
      return { content: "stopped", isError: true, error: { code: "aborted", retryable: false, suggestedFix: "" } };
    return { content: `${name}:${args.label}` };
  };
  const parameters = T.Object(
    { label: T.String(), ms: T.Optional(T.Integer({ minimum: 0 })) },
    { additionalProperties: false },
  );
  return definePlugin({
    manifest: { id: "probe-tools", version: "1.0.0", description: "test tools that sleep" },
    register(ctx) {
      ctx.tools.add({
        name: "probe_read",
        description: "read-only sleeper",
        readOnly: true,
        parameters,
        execute: body("probe_read"),
      });
      ctx.tools.add({ name: "probe_write", description: "mutating sleeper", parameters, execute: body("probe_write") });
      ctx.tools.add({
        name: "probe_fail",
        description: "always throws",
        parameters: T.Object({}),
        execute: async () => {
          throw new Error("disk on fire");
        },
      });
    },
  });
}

const types = (sse: SseClient, from = 0) => sse.frames.slice(from).map((f) => f.json?.type as string);

describe("agent loop (fake provider, real daemon)", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let sse: SseClient;
  let id: string;
  const spans: Span[] = [];
  const gates = new Map<string, Promise<void>>();

  beforeEach(async () => {
    spans.length = 0;
    gates.clear();
    fake = await startFakeProvider();
    d = await startTestDaemon({
      config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" } },
      builtins: [...builtinPlugins, probeTools(spans, gates)].map(builtinSource),
    });
    id = await d.createSession();
    sse = await d.sse(`/sessions/${id}/events`);
  });
  afterEach(async () => {
    sse.close();
    await d.cleanup();
    await fake.close();
  });

  const chat = (body: Record<string, unknown>) => d.post(`/sessions/${id}/chat`, body);
  const ends = () => sse.ofType("end");
  const waitEnds = (n: number) => sse.waitFor(() => ends().length >= n, 15_000);

  it("announces the status the turn engine states on the all-sessions feed: running at the start, idle at the end", async () => {
    const feed = await d.sse("/sessions/events");
    await feed.waitForType("connected");
    fake.script(turn({ content: "ok" }));
    expect((await chat({ text: "status please" })).status).to.equal(202);
    await waitEnds(1);
    const mine = () =>
      feed.frames
        .filter((f) => f.json?.type === "session_update" && f.json.sessionId === id)
        .map((f) => f.json.session);
    await feed.waitFor(() => mine().some((s) => s.status === "idle"), 15_000);
    const statuses = mine().map((s) => s.status);
    expect(statuses[0]).to.equal("running");
    expect(statuses.at(-1)).to.equal("idle");
    expect(statuses.indexOf("idle")).to.be.greaterThan(statuses.indexOf("running"));
    // The session's own stream carries the same summaries, and the stored record's updatedAt moved with them.
    const own = sse.frames.filter((f) => f.json?.type === "session_update").map((f) => f.json.session.status);
    expect(own[0]).to.equal("running");
    await sse.waitFor(() =>
      sse.frames.some((f) => f.json?.type === "session_update" && f.json.session.status === "idle"),
    );
    const last = mine().at(-1);
    const got = await d.get(`/sessions/${id}`);
    expect(got.body.status).to.equal("idle");
    expect(Date.parse(last.updatedAt)).to.be.at.least(Date.parse(mine()[0].updatedAt));
    feed.close();
  });

  it("streams a turn in the spec's order and persists it", async () => {
    fake.script(
      turn(
        { reasoning: "hmm" },
        { content: "Hel" },
        { content: "lo" },
        { usage: { prompt_tokens: 10, completion_tokens: 2 } },
      ),
    );
    const res = await chat({ text: "hi" });
    expect(res.status).to.equal(202);
    expect(res.body).to.deep.equal({ ok: true, status: "started" });
    await waitEnds(1);
    const all = types(sse);
    const main = ["user_message", "assistant_message", "turn_end", "end", "session_end"];
    expect(all.filter((t) => main.includes(t))).to.deep.equal(main);
    const statuses = sse.ofType("status").map((f) => [sse.frames.indexOf(f), f.json.status]);
    const running = statuses.find(([, s]) => s === "running")?.[0] as number;
    const idle = statuses.filter(([, s]) => s === "idle").at(-1)?.[0] as number;
    expect(running).to.be.lessThan(all.indexOf("user_message"));
    expect(idle).to.be.greaterThan(all.indexOf("end")).and.lessThan(all.indexOf("session_end"));
    expect(all.indexOf("thinking")).to.be.lessThan(all.indexOf("token"));
    expect(all.lastIndexOf("token")).to.be.lessThan(all.indexOf("turn_end"));
    expect(
      sse
        .ofType("token")
        .map((f) => f.json.content ?? f.json.text ?? f.json.delta)
        .join(""),
    ).to.equal("Hello");
    expect(ends()).to.have.length(1);
    expect(ends()[0]?.json.reason).to.equal("stop");
    const meta = sse.ofType("turn_meta")[0]?.json;
    expect(meta).to.include({ model: "fake-model", provider: "openai" });
    expect(all.indexOf("turn_meta")).to.be.lessThan(all.indexOf("end"));
    expect(sse.ofType("fs_change")).to.have.length(0); // no tool ran
    const view = await d.get(`/sessions/${id}`);
    expect(view.body.status).to.equal("idle");
    expect(view.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).to.deep.equal([
      ["user", "hi"],
      ["assistant", "Hello"],
    ]);
    expect(view.body.messages[1].thinking).to.equal("hmm");
    // The request carried the persona's system prompt and the user's text.
    const req = fake.requests[0] as { messages: Array<{ role: string; content: unknown }>; stream?: boolean };
    expect(req.stream).to.equal(true);
    expect(req.messages[0]?.role).to.equal("system");
    expect(req.messages.at(-1)).to.deep.include({ role: "user", content: "hi" });
  });

  it("runs tools, feeds results back and shows live blocks while streaming", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    fake.script(
      tools([{ name: "probe_write", args: { label: "a" }, id: "call_1" }]),
      turn({ content: "partial " }, { waitFor: held }, { content: "done" }),
    );
    await chat({ text: "go" });
    await sse.waitFor((f) => f.json?.type === "token" && JSON.stringify(f.json).includes("partial"));
    const live = await d.get(`/sessions/${id}`);
    expect(live.body.status).to.equal("running");
    expect(JSON.stringify(live.body.streaming)).to.include("partial");
    // The tool result is already persisted while the turn still runs.
    const tool = live.body.messages.find((m: { toolCalls?: unknown[] }) => m.toolCalls?.length);
    expect(tool.toolCalls[0]).to.deep.include({
      id: "call_1",
      name: "probe_write",
      status: "ok",
      result: "probe_write:a",
    });
    release();
    await waitEnds(1);
    const second = fake.requests[1] as { messages: Array<{ role: string; tool_call_id?: string; content: unknown }> };
    expect(second.messages.at(-1)).to.deep.include({ role: "tool", tool_call_id: "call_1", content: "probe_write:a" });
    const starts = sse.ofType("tool_start");
    const toolEnds = sse.ofType("tool_end");
    expect(starts).to.have.length(1);
    expect(sse.ofType("fs_change")).to.have.length(1); // a mutating tool ran
    expect(toolEnds[0]?.json).to.deep.include({ id: "call_1", name: "probe_write", status: "ok" });
    expect(sse.frames.indexOf(starts[0] as never)).to.be.lessThan(sse.frames.indexOf(toolEnds[0] as never));
  });

  it("turns unknown tools, malformed arguments and throwing tools into recoverable error results", async () => {
    fake.script(
      tools([
        { name: "no_such_tool", args: {}, id: "c1" },
        { name: "probe_write", args: "{not json", id: "c2" },
        { name: "probe_write", args: { label: 5 }, id: "c3" },
        { name: "probe_fail", args: {}, id: "c4" },
      ]),
      text("recovered"),
    );
    await chat({ text: "try" });
    await waitEnds(1);
    const codes = Object.fromEntries(sse.ofType("tool_end").map((f) => [f.json.id, f.json.result.error?.code]));
    expect(codes).to.deep.equal({
      c1: "unknown_tool",
      c2: "invalid_arguments",
      c3: "invalid_arguments",
      c4: "execution_failed",
    });
    for (const f of sse.ofType("tool_end")) {
      expect(f.json.status).to.equal("error");
      expect(f.json.result.error).to.have.keys("code", "retryable", "suggestedFix");
      expect(f.json.result.content).to.be.a("string").and.not.empty;
    }
    expect(ends()[0]?.json.reason).to.equal("stop");
    const back = fake.requests[1] as { messages: Array<{ role: string; tool_call_id?: string; content: string }> };
    const unknown = back.messages.find((m) => m.tool_call_id === "c1");
    expect(unknown?.content).to.match(/probe_read|probe_write/); // lists the tools that exist
  });

  it("runs read-only tools of one message concurrently and the others in call order", async () => {
    fake.script(
      tools([
        { name: "probe_read", args: { label: "r1", ms: 300 } },
        { name: "probe_read", args: { label: "r2", ms: 300 } },
        { name: "probe_read", args: { label: "r3", ms: 300 } },
        { name: "probe_write", args: { label: "w1", ms: 150 } },
        { name: "probe_write", args: { label: "w2", ms: 150 } },
      ]),
      text("ok"),
    );
    await chat({ text: "many" });
    await waitEnds(1);
    const by = (label: string) => spans.find((s) => s.label === label) as Span;
    const reads = ["r1", "r2", "r3"].map(by);
    // Concurrent: every read started before any read finished (a sequential run could not do that).
    const firstEnd = Math.min(...reads.map((s) => s.end));
    for (const s of reads) expect(s.start).to.be.lessThan(firstEnd);
    const readWall = Math.max(...reads.map((s) => s.end)) - Math.min(...reads.map((s) => s.start));
    expect(readWall).to.be.lessThan(2 * 300 * 3 * 0.5 + 300); // well under the sequential sum (900 ms) x 2
    // Mutating tools: strictly one after the other, after the reads, in call order.
    expect(by("w1").start).to.be.at.least(Math.max(...reads.map((s) => s.end)) - 1);
    expect(by("w2").start).to.be.at.least(by("w1").end - 1);
    // tool_end is emitted as each tool finishes; the results reach the model in call order.
    expect(sse.ofType("tool_end")).to.have.length(5);
    const back = fake.requests[1] as { messages: Array<{ role: string; content: string }> };
    expect(back.messages.filter((m) => m.role === "tool").map((m) => m.content)).to.deep.equal([
      "probe_read:r1",
      "probe_read:r2",
      "probe_read:r3",
      "probe_write:w1",
      "probe_write:w2",
    ]);
  });

  it("steers a message into the running turn before the next model call", async () => {
    let release!: () => void;
    fake.script(
      turn(
        { content: "working" },
        { waitFor: new Promise<void>((r) => (release = r)) },
        { toolCall: { id: "s1", name: "probe_write", arguments: '{"label":"x"}' } },
      ),
      text("steered answer"),
    );
    await chat({ text: "start" });
    await sse.waitForType("token");
    const steer = await d.post(`/sessions/${id}/steer`, { message: "also check the tests" });
    expect(steer.status).to.equal(202);
    expect(steer.body.status).to.equal("steered");
    // A plain chat while running is steered too, and says so.
    const chat2 = await chat({ text: "and docs" });
    expect(chat2.body.status).to.equal("steered");
    release();
    await waitEnds(1);
    expect(fake.requests).to.have.length(2);
    const next = fake.requests[1] as { messages: Array<{ role: string; content: unknown }> };
    const users = next.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(users).to.deep.equal(["start", "also check the tests", "and docs"]);
    expect(sse.ofType("steering_injected")).to.have.length(1);
    expect(ends()).to.have.length(1);
  });

  it("queues a follow-up that becomes a new turn after the current one", async () => {
    let release!: () => void;
    fake.script(turn({ content: "first" }, { waitFor: new Promise<void>((r) => (release = r)) }), text("second"));
    await chat({ text: "one" });
    await sse.waitForType("token");
    const q = await d.post(`/sessions/${id}/followup`, { message: "two" });
    expect(q.status).to.equal(202);
    expect(q.body.status).to.equal("queued");
    release();
    await waitEnds(2);
    expect(ends().map((f) => f.json.reason)).to.deep.equal(["stop", "stop"]);
    const second = fake.requests[1] as { messages: Array<{ role: string; content: unknown }> };
    expect(second.messages.filter((m) => m.role === "user").map((m) => m.content)).to.deep.equal(["one", "two"]);
    const view = await d.get(`/sessions/${id}`);
    expect(view.body.messages.map((m: { content: string }) => m.content)).to.deep.equal([
      "one",
      "first",
      "two",
      "second",
    ]);
    // Idle follow-up starts a turn at once.
    const idle = await d.post(`/sessions/${id}/followup`, { message: "three" });
    expect(idle.body.status).to.equal("started");
    await waitEnds(3);
  });

  it("aborts mid-stream: end aborted, partial blocks kept, queues cleared", async () => {
    fake.script(turn({ content: "partial answer" }, { waitFor: new Promise(() => {}) }));
    await chat({ text: "long" });
    await sse.waitForType("token");
    await d.post(`/sessions/${id}/followup`, { message: "never runs" });
    const res = await d.post(`/sessions/${id}/abort`);
    expect(res.status).to.equal(200);
    await waitEnds(1);
    expect(ends()[0]?.json.reason).to.equal("aborted");
    const end = sse.frames.indexOf(ends()[0] as never);
    expect(types(sse).indexOf("turn_end")).to.be.lessThan(end);
    const view = await d.get(`/sessions/${id}`);
    expect(view.body.status).to.equal("idle");
    expect(view.body.messages.map((m: { content: string }) => m.content)).to.deep.equal(["long", "partial answer"]);
    expect(fake.requests).to.have.length(1); // the follow-up was dropped with the abort
    // Abort while idle is a harmless 200.
    expect((await d.post(`/sessions/${id}/abort`)).status).to.equal(200);
  });

  it("aborts mid-tool: the tool sees the signal and its result is recorded as aborted", async () => {
    gates.set("hang", new Promise(() => {}));
    fake.script(tools([{ name: "probe_write", args: { label: "hang" }, id: "t1" }]));
    await chat({ text: "run it" });
    await sse.waitForType("probe_started"); // running, not only announced (hooks such as checkpoints run first)
    await d.post(`/sessions/${id}/abort`);
    await waitEnds(1);
    expect(ends()[0]?.json.reason).to.equal("aborted");
    const toolEnd = sse.ofType("tool_end")[0]?.json;
    expect(toolEnd.status).to.equal("error");
    expect(toolEnd.result.error.code).to.equal("aborted");
    expect(spans[0]?.end).to.be.greaterThan(0); // the tool itself returned after the abort
    const view = await d.get(`/sessions/${id}`);
    expect(view.body.messages[1].toolCalls[0].status).to.equal("error");
    expect(fake.requests).to.have.length(1);
  });

  it("retries a provider 500 (visible as an event) and succeeds", async () => {
    fake.script(fail(500, { headers: { "retry-after": "0" } }), text("after retry"));
    await chat({ text: "x" });
    await waitEnds(1);
    expect(sse.ofType("retry")).to.have.length(1);
    expect(ends()[0]?.json.reason).to.equal("stop");
    expect(fake.requests).to.have.length(2);
    const view = await d.get(`/sessions/${id}`);
    expect(view.body.messages[1].content).to.equal("after retry");
  });

  it("reports a provider 401 as an error without retrying", async () => {
    fake.script(fail(401));
    await chat({ text: "x" });
    await waitEnds(1);
    expect(ends()[0]?.json.reason).to.equal("error");
    const err = sse.ofType("error")[0]?.json;
    expect(err.message).to.match(/401|auth|key/i);
    expect(err.message).to.not.include("sk-test");
    expect(fake.requests).to.have.length(1);
    expect(sse.ofType("retry")).to.have.length(0);
  });

  it("never drops queued follow-ups silently when a turn fails", async () => {
    let release!: () => void;
    fake.script(turn({ content: "x" }, { waitFor: new Promise<void>((r) => (release = r)) }, { cut: true }));
    await chat({ text: "first" });
    await sse.waitForType("token");
    await d.post(`/sessions/${id}/followup`, { message: "queued one" });
    release();
    await waitEnds(1);
    expect(ends()[0]?.json.reason).to.equal("disconnected");
    const notice = sse.ofType("notice").find((f) => f.json.unsent);
    expect(notice?.json.unsent).to.deep.equal(["queued one"]);
  });

  it("ends with disconnected when the stream is cut, keeping the partial output", async () => {
    fake.script(turn({ content: "half of it" }, { cut: true }));
    await chat({ text: "x" });
    await waitEnds(1);
    expect(ends()[0]?.json.reason).to.equal("disconnected");
    const view = await d.get(`/sessions/${id}`);
    expect(view.body.messages.map((m: { content: string }) => m.content)).to.deep.equal(["x", "half of it"]);
  });

  it("de-duplicates clientMessageId: a retried POST never starts a second turn", async () => {
    fake.script(text("only once"));
    const a = await chat({ text: "x", clientMessageId: "m-1" });
    const b = await chat({ text: "x", clientMessageId: "m-1" });
    expect(a.body.status).to.equal("started");
    expect(b.status).to.equal(202);
    expect(b.body.status).to.equal("duplicate");
    await waitEnds(1);
    const c = await chat({ text: "x", clientMessageId: "m-1" });
    expect(c.body.status).to.equal("duplicate");
    expect(fake.requests).to.have.length(1);
    const view = await d.get(`/sessions/${id}`);
    expect(view.body.messages.filter((m: { role: string }) => m.role === "user")).to.have.length(1);
    expect(view.body.messages[0].clientMessageId).to.equal("m-1");
  });

  it("rejects bad chat input with 400/404 and never starts a turn", async () => {
    expect((await chat({})).status).to.equal(400);
    expect((await chat({ text: "   " })).status).to.equal(400);
    expect((await chat({ text: "x", extra: 1 })).status).to.equal(400);
    expect((await chat({ text: "x", images: ["http://example.com/a.png"] })).status).to.equal(400);
    expect((await d.post("/sessions/nope/chat", { text: "x" })).status).to.equal(404);
    expect((await d.post(`/sessions/${id}/steer`, {})).status).to.equal(400);
    expect(fake.requests).to.have.length(0);
  });

  it("accepts images as data URLs and sends them to the model", async () => {
    const png = "data:image/png;base64,iVBORw0KGgo=";
    await chat({ text: "look", images: [png] });
    await waitEnds(1);
    const req = fake.requests[0] as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(req.messages.at(-1)?.content)).to.include(png);
    const view = await d.get(`/sessions/${id}`);
    expect(view.body.messages[0].images[0]).to.match(/\/sessions\/.+\/image\?seq=\d+&idx=0$/);
  });

  it("stops at the per-turn iteration cap with a wrap-up nudge near it", async () => {
    const cap = 10;
    for (let i = 0; i < cap + 2; i++) fake.script(tools([{ name: "probe_read", args: { label: `l${i}` } }]));
    await chat({ text: "loop forever", goal: cap });
    await waitEnds(1);
    expect(fake.requests).to.have.length(cap);
    expect(ends()[0]?.json.reason).to.equal("stop");
    expect(JSON.stringify(sse.ofType("notice"))).to.match(/iteration cap/);
    const last = fake.requests[cap - 1] as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(last.messages.at(-1))).to.match(/Wrap up/);
    const early = fake.requests[2] as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(early.messages)).to.not.match(/Wrap up/);
  });

  it("compacts the context near the window: summary via the provider, older turns kept in the store", async () => {
    await d.stop();
    d = await startTestDaemon({
      home: d.home,
      config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" }, contextWindow: 1000 },
      builtins: [...builtinPlugins, probeTools(spans, gates)].map(builtinSource),
    });
    sse.close();
    sse = await d.sse(`/sessions/${id}/events`);
    const big = "word ".repeat(700);
    fake.script(text("noted"));
    await chat({ text: big });
    await waitEnds(1);
    fake.scriptFor((b) => JSON.stringify(b.messages).includes("summar"), text("SUMMARY: the user pasted words"));
    fake.script(text("next answer"));
    await chat({ text: "and now?" });
    await waitEnds(2);
    expect(sse.ofType("compaction")).to.have.length(1);
    const final = fake.requests.at(-1) as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(final.messages)).to.include("SUMMARY: the user pasted words");
    expect(JSON.stringify(final.messages)).to.not.include(big.trim());
    const view = await d.get(`/sessions/${id}`);
    expect(view.body.messages.map((m: { content: string }) => m.content)).to.include.members([
      "and now?",
      "next answer",
    ]);
    expect(JSON.stringify(view.body.messages)).to.include("word word");
  });

  it("ends every accepted turn with exactly one end, also when the provider is missing", async () => {
    await d.stop();
    rmSync(join(d.home, "config.json"));
    d = await startTestDaemon({ home: d.home, builtins: [...builtinPlugins].map(builtinSource) });
    sse.close();
    sse = await d.sse(`/sessions/${id}/events`);
    expect((await chat({ text: "x" })).status).to.equal(202);
    await waitEnds(1);
    expect(ends()[0]?.json.reason).to.equal("error");
    expect(sse.ofType("error")[0]?.json.message).to.match(/provider/i);
    expect((await d.get(`/sessions/${id}`)).body.status).to.equal("idle");
  });

  it("handles a tokens-heavy stream and keeps every token in order", async () => {
    fake.script(tokens(500));
    await chat({ text: "count" });
    await waitEnds(1);
    const streamed = sse
      .ofType("token")
      .map((f) => f.json.content ?? f.json.text ?? f.json.delta)
      .join("");
    const view = await d.get(`/sessions/${id}`);
    expect(view.body.messages[1].content).to.equal(streamed);
    expect(streamed).to.equal("tok ".repeat(500));
    // Chunks that arrive in one network read travel as one token event (never split, never reordered).
    const events = sse.ofType("token");
    expect(events.length).to.be.within(1, 500);
    for (const f of events) expect(f.json.text).to.match(/^(tok )+$/);
  });
});
