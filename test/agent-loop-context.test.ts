import { rmSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { startTestDaemon } from "../testing/daemon.js";
import { text, tokens, tools } from "../testing/fake-provider.js";
import { agentLoopFixture, probeTools } from "./support/agent-loop.js";

describe("agent loop (fake provider, real daemon)", function () {
  this.timeout(30_000);
  const { fx, spans, gates, chat, ends, waitEnds } = agentLoopFixture();

  it("accepts images as data URLs and sends them to the model", async () => {
    const png = "data:image/png;base64,iVBORw0KGgo=";
    await chat({ text: "look", images: [png] });
    await waitEnds(1);
    const req = fx.fake.requests[0] as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(req.messages.at(-1)?.content)).to.include(png);
    const view = await fx.d.get(`/sessions/${fx.id}`);
    expect(view.body.messages[0].images[0]).to.match(/\/sessions\/.+\/image\?seq=\d+&idx=0$/);
  });

  it("stops at the per-turn iteration cap with a wrap-up nudge near it", async () => {
    const cap = 10;
    for (let i = 0; i < cap + 2; i++) fx.fake.script(tools([{ name: "probe_read", args: { label: `l${i}` } }]));
    await chat({ text: "loop forever", goal: cap });
    await waitEnds(1);
    expect(fx.fake.requests).to.have.length(cap);
    expect(ends()[0]?.json.reason).to.equal("stop");
    expect(JSON.stringify(fx.sse.ofType("notice"))).to.match(/iteration cap/);
    const last = fx.fake.requests[cap - 1] as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(last.messages.at(-1))).to.match(/Wrap up/);
    const early = fx.fake.requests[2] as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(early.messages)).to.not.match(/Wrap up/);
  });

  it("compacts the context near the window: summary via the provider, older turns kept in the store", async () => {
    await fx.d.stop();
    fx.d = await startTestDaemon({
      home: fx.d.home,
      config: { provider: { baseURL: fx.fake.url, apiKey: "sk-test", model: "fake-model" }, contextWindow: 1000 },
      builtins: [...builtinPlugins, probeTools(spans, gates)].map(builtinSource),
    });
    fx.sse.close();
    fx.sse = await fx.d.sse(`/sessions/${fx.id}/events`);
    const big = "word ".repeat(700);
    fx.fake.script(text("noted"));
    await chat({ text: big });
    await waitEnds(1);
    fx.fake.scriptFor((b) => JSON.stringify(b.messages).includes("summar"), text("SUMMARY: the user pasted words"));
    fx.fake.script(text("next answer"));
    await chat({ text: "and now?" });
    await waitEnds(2);
    expect(fx.sse.ofType("compaction")).to.have.length(1);
    const final = fx.fake.requests.at(-1) as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(final.messages)).to.include("SUMMARY: the user pasted words");
    expect(JSON.stringify(final.messages)).to.not.include(big.trim());
    const view = await fx.d.get(`/sessions/${fx.id}`);
    expect(view.body.messages.map((m: { content: string }) => m.content)).to.include.members([
      "and now?",
      "next answer",
    ]);
    expect(JSON.stringify(view.body.messages)).to.include("word word");
  });

  it("ends every accepted turn with exactly one end, also when the provider is missing", async () => {
    await fx.d.stop();
    rmSync(join(fx.d.home, "config.json"));
    fx.d = await startTestDaemon({ home: fx.d.home, builtins: [...builtinPlugins].map(builtinSource) });
    fx.sse.close();
    fx.sse = await fx.d.sse(`/sessions/${fx.id}/events`);
    expect((await chat({ text: "x" })).status).to.equal(202);
    await waitEnds(1);
    expect(ends()[0]?.json.reason).to.equal("error");
    expect(fx.sse.ofType("error")[0]?.json.message).to.match(/provider/i);
    expect((await fx.d.get(`/sessions/${fx.id}`)).body.status).to.equal("idle");
  });

  it("handles a tokens-heavy stream and keeps every token in order", async () => {
    fx.fake.script(tokens(500));
    await chat({ text: "count" });
    await waitEnds(1);
    const streamed = fx.sse
      .ofType("token")
      .map((f) => f.json.content ?? f.json.text ?? f.json.delta)
      .join("");
    const view = await fx.d.get(`/sessions/${fx.id}`);
    expect(view.body.messages[1].content).to.equal(streamed);
    expect(streamed).to.equal("tok ".repeat(500));
    // Chunks that arrive in one network read travel as one token event (never split, never reordered).
    const events = fx.sse.ofType("token");
    expect(events.length).to.be.within(1, 500);
    for (const f of events) expect(f.json.text).to.match(/^(tok )+$/);
  });
});
