import { expect } from "chai";
import { text, tools, turn } from "../testing/fake-provider.js";
import { agentLoopFixture, types } from "./support/agent-loop.js";

describe("agent loop (fake provider, real daemon)", function () {
  this.timeout(30_000);
  const { fx, spans, gates, chat, ends, waitEnds } = agentLoopFixture();

  it("steers a message into the running turn before the next model call", async () => {
    let release!: () => void;
    fx.fake.script(
      turn(
        { content: "working" },
        { waitFor: new Promise<void>((r) => (release = r)) },
        { toolCall: { id: "s1", name: "probe_write", arguments: '{"label":"x"}' } },
      ),
      text("steered answer"),
    );
    await chat({ text: "start" });
    await fx.sse.waitForType("token");
    const steer = await fx.d.post(`/sessions/${fx.id}/steer`, { message: "also check the tests" });
    expect(steer.status).to.equal(202);
    expect(steer.body.status).to.equal("steered");
    // A plain chat while running is steered too, and says so.
    const chat2 = await chat({ text: "and docs" });
    expect(chat2.body.status).to.equal("steered");
    release();
    await waitEnds(1);
    expect(fx.fake.requests).to.have.length(2);
    const next = fx.fake.requests[1] as { messages: Array<{ role: string; content: unknown }> };
    const users = next.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(users).to.deep.equal(["start", "also check the tests", "and docs"]);
    expect(fx.sse.ofType("steering_injected")).to.have.length(1);
    expect(ends()).to.have.length(1);
  });

  it("queues a follow-up that becomes a new turn after the current one", async () => {
    let release!: () => void;
    fx.fake.script(turn({ content: "first" }, { waitFor: new Promise<void>((r) => (release = r)) }), text("second"));
    await chat({ text: "one" });
    await fx.sse.waitForType("token");
    const q = await fx.d.post(`/sessions/${fx.id}/followup`, { message: "two" });
    expect(q.status).to.equal(202);
    expect(q.body.status).to.equal("queued");
    release();
    await waitEnds(2);
    expect(ends().map((f) => f.json.reason)).to.deep.equal(["stop", "stop"]);
    const second = fx.fake.requests[1] as { messages: Array<{ role: string; content: unknown }> };
    expect(second.messages.filter((m) => m.role === "user").map((m) => m.content)).to.deep.equal(["one", "two"]);
    const view = await fx.d.get(`/sessions/${fx.id}`);
    expect(view.body.messages.map((m: { content: string }) => m.content)).to.deep.equal([
      "one",
      "first",
      "two",
      "second",
    ]);
    // Idle follow-up starts a turn at once.
    const idle = await fx.d.post(`/sessions/${fx.id}/followup`, { message: "three" });
    expect(idle.body.status).to.equal("started");
    await waitEnds(3);
  });

  it("aborts mid-stream: end aborted, partial blocks kept, queues cleared", async () => {
    fx.fake.script(turn({ content: "partial answer" }, { waitFor: new Promise(() => {}) }));
    await chat({ text: "long" });
    await fx.sse.waitForType("token");
    await fx.d.post(`/sessions/${fx.id}/followup`, { message: "never runs" });
    const res = await fx.d.post(`/sessions/${fx.id}/abort`);
    expect(res.status).to.equal(200);
    await waitEnds(1);
    expect(ends()[0]?.json.reason).to.equal("aborted");
    const end = fx.sse.frames.indexOf(ends()[0] as never);
    expect(types(fx.sse).indexOf("turn_end")).to.be.lessThan(end);
    const view = await fx.d.get(`/sessions/${fx.id}`);
    expect(view.body.status).to.equal("idle");
    expect(view.body.messages.map((m: { content: string }) => m.content)).to.deep.equal(["long", "partial answer"]);
    expect(fx.fake.requests).to.have.length(1); // the follow-up was dropped with the abort
    // Abort while idle is a harmless 200.
    expect((await fx.d.post(`/sessions/${fx.id}/abort`)).status).to.equal(200);
  });

  it("aborts mid-tool: the tool sees the signal and its result is recorded as aborted", async () => {
    gates.set("hang", new Promise(() => {}));
    fx.fake.script(tools([{ name: "probe_write", args: { label: "hang" }, id: "t1" }]));
    await chat({ text: "run it" });
    await fx.sse.waitForType("probe_started"); // running, not only announced (hooks such as checkpoints run first)
    await fx.d.post(`/sessions/${fx.id}/abort`);
    await waitEnds(1);
    expect(ends()[0]?.json.reason).to.equal("aborted");
    const toolEnd = fx.sse.ofType("tool_end")[0]?.json;
    expect(toolEnd.status).to.equal("error");
    expect(toolEnd.result.error.code).to.equal("aborted");
    expect(spans[0]?.end).to.be.greaterThan(0); // the tool itself returned after the abort
    const view = await fx.d.get(`/sessions/${fx.id}`);
    expect(view.body.messages[1].toolCalls[0].status).to.equal("error");
    expect(fx.fake.requests).to.have.length(1);
  });
});
