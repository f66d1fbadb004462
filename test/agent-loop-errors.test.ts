import { expect } from "chai";
import { fail, text, turn } from "../testing/fake-provider.js";
import { agentLoopFixture } from "./support/agent-loop.js";

describe("agent loop (fake provider, real daemon)", function () {
  this.timeout(30_000);
  const { fx, chat, ends, waitEnds } = agentLoopFixture();

  it("retries a provider 500 (visible as an event) and succeeds", async () => {
    fx.fake.script(fail(500, { headers: { "retry-after": "0" } }), text("after retry"));
    await chat({ text: "x" });
    await waitEnds(1);
    expect(fx.sse.ofType("retry")).to.have.length(1);
    expect(ends()[0]?.json.reason).to.equal("stop");
    expect(fx.fake.requests).to.have.length(2);
    const view = await fx.d.get(`/sessions/${fx.id}`);
    expect(view.body.messages[1].content).to.equal("after retry");
  });

  it("reports a provider 401 as an error without retrying", async () => {
    fx.fake.script(fail(401));
    await chat({ text: "x" });
    await waitEnds(1);
    expect(ends()[0]?.json.reason).to.equal("error");
    const err = fx.sse.ofType("error")[0]?.json;
    expect(err.message).to.match(/401|auth|key/i);
    expect(err.message).to.not.include("sk-test");
    expect(fx.fake.requests).to.have.length(1);
    expect(fx.sse.ofType("retry")).to.have.length(0);
  });

  it("never drops queued follow-ups silently when a turn fails", async () => {
    let release!: () => void;
    fx.fake.script(turn({ content: "x" }, { waitFor: new Promise<void>((r) => (release = r)) }, { cut: true }));
    await chat({ text: "first" });
    await fx.sse.waitForType("token");
    await fx.d.post(`/sessions/${fx.id}/followup`, { message: "queued one" });
    release();
    await waitEnds(1);
    expect(ends()[0]?.json.reason).to.equal("disconnected");
    const notice = fx.sse.ofType("notice").find((f) => f.json.unsent);
    expect(notice?.json.unsent).to.deep.equal(["queued one"]);
  });

  it("ends with disconnected when the stream is cut, keeping the partial output", async () => {
    fx.fake.script(turn({ content: "half of it" }, { cut: true }));
    await chat({ text: "x" });
    await waitEnds(1);
    expect(ends()[0]?.json.reason).to.equal("disconnected");
    const view = await fx.d.get(`/sessions/${fx.id}`);
    expect(view.body.messages.map((m: { content: string }) => m.content)).to.deep.equal(["x", "half of it"]);
  });

  it("de-duplicates clientMessageId: a retried POST never starts a second turn", async () => {
    fx.fake.script(text("only once"));
    const a = await chat({ text: "x", clientMessageId: "m-1" });
    const b = await chat({ text: "x", clientMessageId: "m-1" });
    expect(a.body.status).to.equal("started");
    expect(b.status).to.equal(202);
    expect(b.body.status).to.equal("duplicate");
    await waitEnds(1);
    const c = await chat({ text: "x", clientMessageId: "m-1" });
    expect(c.body.status).to.equal("duplicate");
    expect(fx.fake.requests).to.have.length(1);
    const view = await fx.d.get(`/sessions/${fx.id}`);
    expect(view.body.messages.filter((m: { role: string }) => m.role === "user")).to.have.length(1);
    expect(view.body.messages[0].clientMessageId).to.equal("m-1");
  });

  it("rejects bad chat input with 400/404 and never starts a turn", async () => {
    expect((await chat({})).status).to.equal(400);
    expect((await chat({ text: "   " })).status).to.equal(400);
    expect((await chat({ text: "x", extra: 1 })).status).to.equal(400);
    expect((await chat({ text: "x", images: ["http://example.com/a.png"] })).status).to.equal(400);
    expect((await fx.d.post("/sessions/nope/chat", { text: "x" })).status).to.equal(404);
    expect((await fx.d.post(`/sessions/${fx.id}/steer`, {})).status).to.equal(400);
    expect(fx.fake.requests).to.have.length(0);
  });
});
