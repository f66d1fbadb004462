import { expect } from "chai";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, raw, startFakeProvider, text } from "../testing/fake-provider.js";
import { recordingTools } from "./support/provider-streams.js";

describe("provider compatibility: recorded streams of real providers", () => {
  describe("bad streams: a clear error, nothing hangs, nothing half-assembled runs", function () {
    this.timeout(30_000);
    let fake: FakeProvider;
    let d: TestDaemon;
    const seen: Array<{ name: string; args: unknown }> = [];
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const call = (args: string) =>
      chunk({ tool_calls: [{ index: 0, id: "call_1", function: { name: "weather", arguments: args } }] });

    before(async () => {
      fake = await startFakeProvider();
      d = await startTestDaemon({
        config: {
          provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" },
          pluginOptions: { "provider-openai": { timeoutMs: 400 } },
        },
        builtins: [...builtinPlugins, recordingTools(seen)].map(builtinSource),
      });
    });
    after(async () => {
      await d.cleanup();
      await fake.close();
    });

    /** Runs one turn answered by `body`; returns its end, error messages and the stored assistant message. */
    async function turnOf(body: ReturnType<typeof raw>, ...more: Array<ReturnType<typeof text>>) {
      seen.length = 0;
      fake.clearScript();
      fake.script(body, ...more);
      const id = await d.createSession();
      const sse = await d.sse(`/sessions/${id}/events`);
      try {
        expect((await d.post(`/sessions/${id}/chat`, { text: "go" })).status).to.equal(202);
        await sse.waitFor(() => sse.ofType("end").length > 0, 20_000);
        const view = await d.get(`/sessions/${id}`);
        return {
          end: sse.ofType("end")[0]?.json.reason as string,
          errors: sse.ofType("error").map((f) => String(f.json.message)),
          assistant: view.body.messages.find((m: { role: string }) => m.role === "assistant"),
        };
      } finally {
        sse.close();
      }
    }

    it("garbage instead of an event stream", async () => {
      const r = await turnOf(raw("<html><body><h1>502 Bad Gateway</h1></body></html>\n"));
      expect(r.end).to.equal("error");
      expect(r.errors.join()).to.match(/not a chat-completions event stream: it sent "<html><body><h1>502 Bad Gateway/);
    });

    it("a stream cut off in the middle of a JSON chunk", async () => {
      const r = await turnOf(raw(`${chunk({ content: "Hel" })}data: {"id":"c1","choices":[{"index":0,"delta":{"cont`));
      expect(r.end).to.equal("error");
      expect(r.errors.join()).to.match(/stream chunk that is not JSON/);
      expect(r.assistant?.content).to.equal("Hel");
    });

    it("a stream that ends cleanly in the middle of a tool call: the call does not run", async () => {
      const r = await turnOf(raw(call('{"location": "San')));
      expect(r.end).to.equal("error");
      expect(r.errors.join()).to.match(/ended in the middle of a tool call/);
      expect(r.assistant?.toolCalls ?? []).to.deep.equal([]);
      expect(seen).to.deep.equal([]);
    });

    it("a stream that never ends, silent or with keep-alive comments only, within the provider timeout", async () => {
      for (const body of [chunk({ content: "Hel" }), ": keep-alive\n\n".repeat(3)]) {
        const r = await turnOf(raw(body, { hang: true }));
        expect(r.end).to.equal("error");
        expect(r.errors.join()).to.match(/sent no stream data for 400 ms/);
      }
    });

    it("tool-call arguments that never become valid JSON reach the model as invalid_arguments", async () => {
      const before = fake.requests.length;
      const r = await turnOf(
        raw(`${call('{"location": "San')}${chunk({}, "tool_calls")}data: [DONE]\n\n`),
        text("I will fix the arguments."),
      );
      expect(r.end).to.equal("stop");
      expect(seen).to.deep.equal([]);
      expect(r.assistant?.toolCalls?.[0]).to.include({ id: "call_1", name: "weather", status: "error" });
      const followUp = fake.requests[before + 1]?.messages ?? [];
      const result = followUp.find((m) => m.role === "tool") as { tool_call_id: string; content: string };
      expect(result.tool_call_id).to.equal("call_1");
      expect(result.content).to.match(/invalid_arguments|not valid JSON/);
    });
  });
});
