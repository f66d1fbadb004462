import { expect } from "chai";
import { text, tools, turn } from "../testing/fake-provider.js";
import { agentLoopFixture, type Span, types } from "./support/agent-loop.js";

describe("agent loop (fake provider, real daemon)", function () {
  this.timeout(30_000);
  const { fx, spans, chat, ends, waitEnds } = agentLoopFixture();

  it("announces the status the turn engine states on the all-sessions feed: running at the start, idle at the end", async () => {
    const feed = await fx.d.sse("/sessions/events");
    await feed.waitForType("connected");
    fx.fake.script(turn({ content: "ok" }));
    expect((await chat({ text: "status please" })).status).to.equal(202);
    await waitEnds(1);
    const mine = () =>
      feed.frames
        .filter((f) => f.json?.type === "session_update" && f.json.sessionId === fx.id)
        .map((f) => f.json.session);
    await feed.waitFor(() => mine().some((s) => s.status === "idle"), 15_000);
    const statuses = mine().map((s) => s.status);
    expect(statuses[0]).to.equal("running");
    expect(statuses.at(-1)).to.equal("idle");
    expect(statuses.indexOf("idle")).to.be.greaterThan(statuses.indexOf("running"));
    // The session's own stream carries the same summaries, and the stored record's updatedAt moved with them.
    const own = fx.sse.frames.filter((f) => f.json?.type === "session_update").map((f) => f.json.session.status);
    expect(own[0]).to.equal("running");
    await fx.sse.waitFor(() =>
      fx.sse.frames.some((f) => f.json?.type === "session_update" && f.json.session.status === "idle"),
    );
    const last = mine().at(-1);
    const got = await fx.d.get(`/sessions/${fx.id}`);
    expect(got.body.status).to.equal("idle");
    expect(Date.parse(last.updatedAt)).to.be.at.least(Date.parse(mine()[0].updatedAt));
    feed.close();
  });

  it("streams a turn in the spec's order and persists it", async () => {
    fx.fake.script(
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
    const all = types(fx.sse);
    const main = ["user_message", "assistant_message", "turn_end", "end", "session_end"];
    expect(all.filter((t) => main.includes(t))).to.deep.equal(main);
    const statuses = fx.sse.ofType("status").map((f) => [fx.sse.frames.indexOf(f), f.json.status]);
    const running = statuses.find(([, s]) => s === "running")?.[0] as number;
    const idle = statuses.filter(([, s]) => s === "idle").at(-1)?.[0] as number;
    expect(running).to.be.lessThan(all.indexOf("user_message"));
    expect(idle).to.be.greaterThan(all.indexOf("end")).and.lessThan(all.indexOf("session_end"));
    expect(all.indexOf("thinking")).to.be.lessThan(all.indexOf("token"));
    expect(all.lastIndexOf("token")).to.be.lessThan(all.indexOf("turn_end"));
    expect(
      fx.sse
        .ofType("token")
        .map((f) => f.json.content ?? f.json.text ?? f.json.delta)
        .join(""),
    ).to.equal("Hello");
    expect(ends()).to.have.length(1);
    expect(ends()[0]?.json.reason).to.equal("stop");
    const meta = fx.sse.ofType("turn_meta")[0]?.json;
    expect(meta).to.include({ model: "fake-model", provider: "openai" });
    expect(all.indexOf("turn_meta")).to.be.lessThan(all.indexOf("end"));
    expect(fx.sse.ofType("fs_change")).to.have.length(0); // no tool ran
    const view = await fx.d.get(`/sessions/${fx.id}`);
    expect(view.body.status).to.equal("idle");
    expect(view.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).to.deep.equal([
      ["user", "hi"],
      ["assistant", "Hello"],
    ]);
    expect(view.body.messages[1].thinking).to.equal("hmm");
    // The request carried the persona's system prompt and the user's text.
    const req = fx.fake.requests[0] as { messages: Array<{ role: string; content: unknown }>; stream?: boolean };
    expect(req.stream).to.equal(true);
    expect(req.messages[0]?.role).to.equal("system");
    expect(req.messages.at(-1)).to.deep.include({ role: "user", content: "hi" });
  });

  it("runs tools, feeds results back and shows live blocks while streaming", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    fx.fake.script(
      tools([{ name: "probe_write", args: { label: "a" }, id: "call_1" }]),
      turn({ content: "partial " }, { waitFor: held }, { content: "done" }),
    );
    await chat({ text: "go" });
    await fx.sse.waitFor((f) => f.json?.type === "token" && JSON.stringify(f.json).includes("partial"));
    const live = await fx.d.get(`/sessions/${fx.id}`);
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
    const second = fx.fake.requests[1] as {
      messages: Array<{ role: string; tool_call_id?: string; content: unknown }>;
    };
    expect(second.messages.at(-1)).to.deep.include({ role: "tool", tool_call_id: "call_1", content: "probe_write:a" });
    const starts = fx.sse.ofType("tool_start");
    const toolEnds = fx.sse.ofType("tool_end");
    expect(starts).to.have.length(1);
    expect(fx.sse.ofType("fs_change")).to.have.length(1); // a mutating tool ran
    expect(toolEnds[0]?.json).to.deep.include({ id: "call_1", name: "probe_write", status: "ok" });
    expect(fx.sse.frames.indexOf(starts[0] as never)).to.be.lessThan(fx.sse.frames.indexOf(toolEnds[0] as never));
  });

  it("turns unknown tools, malformed arguments and throwing tools into recoverable error results", async () => {
    fx.fake.script(
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
    const codes = Object.fromEntries(fx.sse.ofType("tool_end").map((f) => [f.json.id, f.json.result.error?.code]));
    expect(codes).to.deep.equal({
      c1: "unknown_tool",
      c2: "invalid_arguments",
      c3: "invalid_arguments",
      c4: "execution_failed",
    });
    for (const f of fx.sse.ofType("tool_end")) {
      expect(f.json.status).to.equal("error");
      expect(f.json.result.error).to.have.keys("code", "retryable", "suggestedFix");
      expect(f.json.result.content).to.be.a("string").and.not.empty;
    }
    expect(ends()[0]?.json.reason).to.equal("stop");
    const back = fx.fake.requests[1] as { messages: Array<{ role: string; tool_call_id?: string; content: string }> };
    const unknown = back.messages.find((m) => m.tool_call_id === "c1");
    expect(unknown?.content).to.match(/probe_read|probe_write/); // lists the tools that exist
  });

  it("runs read-only tools of one message concurrently and the others in call order", async () => {
    fx.fake.script(
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
    expect(fx.sse.ofType("tool_end")).to.have.length(5);
    const back = fx.fake.requests[1] as { messages: Array<{ role: string; content: string }> };
    expect(back.messages.filter((m) => m.role === "tool").map((m) => m.content)).to.deep.equal([
      "probe_read:r1",
      "probe_read:r2",
      "probe_read:r3",
      "probe_write:w1",
      "probe_write:w2",
    ]);
  });
});
