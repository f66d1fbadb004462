import { expect } from "chai";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, raw, startFakeProvider, text } from "../testing/fake-provider.js";
import { CASES, type Expected, expectText, FILES, read, recordingTools } from "./support/provider-streams.js";

describe("provider compatibility: recorded streams of real providers", () => {
  describe("replayed into a real daemon as the first answer of a turn", function () {
    this.timeout(60_000);
    let fake: FakeProvider;
    let d: TestDaemon;
    const seen: Array<{ name: string; args: unknown }> = [];

    before(async () => {
      fake = await startFakeProvider();
      d = await startTestDaemon({
        config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" } },
        builtins: [...builtinPlugins, recordingTools(seen)].map(builtinSource),
      });
    });
    after(async () => {
      await d.cleanup();
      await fake.close();
    });

    for (const file of FILES) {
      it(file, async () => {
        const want = CASES[file] as Expected;
        seen.length = 0;
        fake.clearScript();
        // Pieces of a prime size, so chunks, tags and UTF-8 sequences are split across writes; the follow-up
        // call after the tool results gets a plain answer.
        fake.script(raw(read(file), { pieceBytes: 97 }), text("done"));
        const id = await d.createSession();
        const sse = await d.sse(`/sessions/${id}/events`);
        const before = fake.requests.length;
        try {
          expect((await d.post(`/sessions/${id}/chat`, { text: "go" })).status).to.equal(202);
          await sse.waitFor(() => sse.ofType("end").length > 0, 30_000);
          const end = sse.ofType("end")[0]?.json;
          const first = sse.frames.findIndex((f) => f.json?.type === "turn_end");
          const ofFirstCall = sse.frames.slice(0, first);
          const streamed = (type: string) =>
            ofFirstCall
              .filter((f) => f.json?.type === type)
              .map((f) => f.json.text)
              .join("");

          // Text and reasoning, live and stored (reasoning once, however many places the server put it).
          expectText(streamed("token"), want.text, "streamed text");
          expectText(streamed("thinking"), want.reasoning, "streamed reasoning");
          const view = await d.get(`/sessions/${id}`);
          const assistant = view.body.messages.find((m: { role: string }) => m.role === "assistant");
          expectText(assistant?.content ?? "", want.text, "stored text");
          expectText(assistant?.thinking ?? "", want.reasoning, "stored reasoning");

          const usage = sse.ofType("usage")[0]?.json.usage;
          if (want.usage) expect(usage, "usage").to.deep.equal(want.usage);
          else expect(usage, "usage").to.equal(undefined);

          if (want.error) {
            expect(end.reason).to.equal("error");
            expect(sse.ofType("error").map((f) => f.json.message)).to.satisfy((m: string[]) =>
              m.some((x) => want.error?.test(x)),
            );
            expect(assistant?.toolCalls ?? []).to.deep.equal([]);
            expect(fake.requests.length - before, "no follow-up call").to.equal(1);
            return;
          }
          expect(end.reason).to.equal("stop");
          expect(sse.ofType("error")).to.deep.equal([]);

          const calls = want.calls ?? [];
          const stored = (assistant?.toolCalls ?? []) as Array<{
            id: string;
            name: string;
            args: string;
            status: string;
          }>;
          expect(
            stored.map((c) => ({ id: c.id, name: c.name, args: JSON.parse(c.args) })),
            "stored tool calls",
          ).to.deep.equal(calls);
          if (calls.length === 0) {
            expect(fake.requests.length - before, "no follow-up call").to.equal(1);
            return;
          }
          // The tools ran with the assembled arguments (glob is the built-in one).
          expect(seen).to.deep.equal(
            calls.filter((c) => c.name !== "glob").map((c) => ({ name: c.name, args: c.args })),
          );
          // The follow-up request: the assistant's calls as sent, then one tool message per call, in order.
          expect(fake.requests.length - before, "one follow-up call").to.equal(2);
          const followUp = fake.requests[before + 1]?.messages ?? [];
          const at = followUp.findIndex((m) => m.role === "assistant");
          const sent = followUp[at] as { tool_calls?: Array<{ id: string; type: string; function: object }> };
          expect(sent.tool_calls).to.deep.equal(
            calls.map((c) => ({
              id: c.id,
              type: "function",
              function: { name: c.name, arguments: stored.find((s) => s.id === c.id)?.args },
            })),
          );
          const results = followUp.slice(at + 1) as Array<{ role: string; tool_call_id?: string; content: unknown }>;
          expect(results.map((m) => [m.role, m.tool_call_id])).to.deep.equal(calls.map((c) => ["tool", c.id]));
          for (const [i, c] of calls.entries()) {
            expect(stored[i]?.status, c.name).to.equal("ok");
            if (c.name !== "glob") expect(results[i]?.content).to.equal(`result of ${c.name}`);
          }
          expect(
            sse
              .ofType("token")
              .map((f) => f.json.text)
              .join(""),
          ).to.equal(`${typeof want.text === "string" ? want.text : ""}done`);
        } finally {
          sse.close();
        }
      });
    }
  });
});
