import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import fc from "fast-check";
import { definePlugin, type ProviderDelta, T } from "../core/index.js";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { ChunkReader } from "../plugins/provider-openai/chunk-reader.js";
import { decodeChatStream } from "../plugins/provider-openai/sse-decoder.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, raw, startFakeProvider, text } from "../testing/fake-provider.js";

/**
 * Provider compatibility: every recorded stream in test/fixtures/provider-streams (real providers and local servers,
 * verbatim; SOURCES.md says where each comes from) is replayed through the fake provider into a real daemon as the
 * first answer of a turn, and the assembled turn is checked: answer text, reasoning (streamed and stored once), tool
 * calls with ids and arguments, the follow-up request after the tool results, usage, and errors.
 */

const DIR = fileURLToPath(new URL("../../test/fixtures/provider-streams/", import.meta.url));
const FILES = readdirSync(DIR).filter((f) => f.endsWith(".sse"));
const read = (file: string) => readFileSync(`${DIR}${file}`);

interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cacheReadTokens?: number;
}

/** Long texts are checked by their ends and length. */
type Text = string | { starts: string; ends: string; length: number };

interface Expected {
  text: Text;
  reasoning?: Text;
  calls?: Array<{ id: string; name: string; args: Record<string, unknown> }>;
  usage?: Usage;
  /** The turn ends with `error`, whose message carries the provider's own words. */
  error?: RegExp;
}

const SF = { location: "San Francisco" };
const u = (promptTokens: number, completionTokens: number, totalTokens: number, cacheReadTokens?: number): Usage => ({
  promptTokens,
  completionTokens,
  totalTokens,
  ...(cacheReadTokens !== undefined ? { cacheReadTokens } : {}),
});

const CASES: Record<string, Expected> = {
  "alibaba-qwen3max-tool-call-empty-ids.sse": {
    text: "",
    calls: [{ id: "call_eee11723464a4b9eb8cee71d", name: "weather", args: SF }],
    usage: u(295, 22, 317, 0),
  },
  "azure-model-router-prompt-filter-results.sse": { text: "Capital of Denmark.", usage: u(15, 78, 93, 0) },
  "deepseek-reasoner-reasoning-content-tool-call.sse": {
    text: "",
    reasoning: {
      starts: "The user is asking for the weather in San Francisco.",
      ends: 'location parameter set to "San Francisco".',
      length: 191,
    },
    calls: [{ id: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", name: "weather", args: SF }],
    usage: u(339, 83, 422, 320),
  },
  "gemini-openai-compat-tool-call-no-index-with-usage.sse": {
    text: "",
    calls: [{ id: "function-call-18439433602034082669", name: "glob", args: { pattern: "*" } }],
    usage: u(3379, 12, 3459),
  },
  "groq-gptoss-error-event-midstream.sse": {
    text: "",
    reasoning: {
      starts: "We need to call the tool with invalid parameters first",
      ends: "Let's do that.",
      length: 412,
    },
    error: /Tool call validation failed: .*did not match schema/,
  },
  "groq-gptoss-reasoning-channel-tool-call.sse": {
    text: "",
    reasoning: 'We need to call the function with correct parameter "name". Provide a name, e.g., "example".',
    calls: [
      { id: "fc_bfb39741-3748-4def-9886-a93fc9c64a90", name: "get_something_by_name", args: { name: "example" } },
    ],
    usage: u(304, 49, 353),
  },
  "groq-llama33-tool-call-single-chunk.sse": {
    text: "",
    calls: [{ id: "tk85n1k4m", name: "weather", args: {} }],
    usage: u(210, 15, 225),
  },
  "llamacpp-gptoss-harmony-tokens-in-content.sse": {
    text: "Got it! If you have any questions or need assistance, just let me know.",
    reasoning: `User says "test". Likely wants a test response. We'll respond acknowledging.`,
    usage: u(82, 43, 125),
  },
  "minimax-m3-think-and-reasoning-duplicated-tool-call.sse": {
    text: "",
    reasoning: "The user is asking me to list Go files using the glob tool. Let me use it to find all .go files.",
    calls: [{ id: "call_e7a6a4765f6048d19f6d5ee8", name: "glob", args: { pattern: "**/*.go" } }],
  },
  "minimax-m3-usage-on-repeated-finish.sse": {
    text: "OK",
    reasoning:
      'The user is asking me to respond with just "OK"and nothing else. This is a simple instruction request. I should comply with this brief request.',
    usage: u(183, 35, 218, 128),
  },
  "mistral-glm-incremental-tool-call.sse": {
    text: "",
    calls: [{ id: "chatcmpl-tool-9f149c74c42f265b", name: "webSearchTool", args: { query: "current Berlin weather" } }],
    usage: u(171, 14, 185, 128),
  },
  "mistral-magistral-thinking-content-parts.sse": {
    text: "2 + 2 = 4",
    reasoning: "The user is asking for 2+2. This is basic arithmetic. 2+2=4.",
    usage: u(10, 46, 56),
  },
  "mistral-small-tool-call-no-index.sse": {
    text: "",
    calls: [{ id: "gSIMJiOkT", name: "weather", args: SF }],
    usage: u(124, 22, 146),
  },
  "ollama-qwen25coder-parallel-tool-calls.sse": {
    text: "",
    calls: [
      { id: "call_wteop8bt", name: "run_command", args: { command: "ls" } },
      { id: "call_rk2xye1l", name: "run_command", args: { command: "ls -l" } },
    ],
  },
  "openai-gpt41nano-text-usage-chunk.sse": {
    text: {
      starts: "**Holiday Name:** Harmony Day\n\n**Date:** Celebrated annually on the first Saturday of May",
      ends: "shared human experiences and mutual respect.",
      length: 1724,
    },
    usage: u(16, 300, 316, 0),
  },
  "openai-gpt4omini-tool-call-usage-chunk.sse": {
    text: "",
    calls: [{ id: "call_ZR5UUuTt3pf61kjwAJIYdVMj", name: "get_capital", args: { country: "UK" } }],
    usage: u(53, 15, 68, 0),
  },
  "openai-gpt5-moderation-chunk-after-usage.sse": { text: "Paris.", usage: u(13, 11, 24, 0) },
  "openrouter-claude-reasoning-details-comments.sse": {
    text: "2 + 2 = 4",
    reasoning: "This is a simple arithmetic question. 2+2 equals 4.",
    usage: u(43, 36, 79, 0),
  },
  "openrouter-minimax-error-inside-chunk.sse": {
    text: "",
    reasoning: "We need to respond to a greeting. The user",
    usage: u(43, 10, 53, 0),
    error: /Token limit reached/,
  },
  "snowflake-cortex-no-finish-reason.sse": { text: "4", usage: u(22, 5, 27, 0) },
  "together-deepseek-r1-think-tags-in-content.sse": {
    text: {
      starts: "Crossing the street safely requires attention and following key steps.",
      ends: "Practice these steps every time—it could save your life! 🌟",
      length: 2558,
    },
    reasoning: {
      starts: 'Okay, the user asked "How do I cross the street?"',
      ends: "but don't sound like a paranoid robot.\n",
      length: 1429,
    },
    usage: u(10, 955, 965, 0),
  },
  "vllm-crusoe-llama33-usage-chunk.sse": { text: "1, 2, 3, 4, 5", usage: u(46, 14, 60, 0) },
  "vllm-qwen-tool-call-name-first.sse": {
    text: "",
    calls: [{ id: "chatcmpl-tool-ca99dda515524c6abe47d1ea22813507", name: "run_command", args: { command: "ls" } }],
  },
  "xai-grok3mini-reasoning-tool-call.sse": {
    text: "",
    reasoning: "First, the user is",
    calls: [{ id: "call_55117580", name: "weather", args: { location: "San Francisco" } }],
    usage: u(291, 26, 513, 290),
  },
};

function expectText(actual: string, expected: Text | undefined, what: string): void {
  if (expected === undefined) expect(actual, what).to.equal("");
  else if (typeof expected === "string") expect(actual, what).to.equal(expected);
  else {
    expect(actual.startsWith(expected.starts), `${what} starts with ${JSON.stringify(expected.starts)}`).to.equal(true);
    expect(actual.endsWith(expected.ends), `${what} ends with ${JSON.stringify(expected.ends)}`).to.equal(true);
    expect(actual, what).to.have.length(expected.length);
  }
  // No control token or think tag of the inline reasoning formats is left in what the user sees.
  expect(actual, what).not.to.match(/<\/?think>|<\|(channel|message|start|end)\|>/);
}

/** Decodes a body given in the pieces of `cuts`, as the provider does, into deltas. */
async function decodeInPieces(
  bytes: Uint8Array,
  cuts: number[],
): Promise<{ deltas: ProviderDelta[]; error?: unknown }> {
  const points = [...new Set(cuts.map((c) => c % bytes.length))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let prev = 0;
  for (const p of [...points, bytes.length]) {
    if (p > prev) pieces.push(bytes.subarray(prev, p));
    prev = p;
  }
  const body = (async function* () {
    yield* pieces;
  })();
  const reader = new ChunkReader();
  const deltas: ProviderDelta[] = [];
  for await (const chunks of decodeChatStream({ body, headers: () => new Headers() })) {
    for (const chunk of chunks) {
      const error = reader.read(chunk, deltas);
      if (error) return { deltas, error };
    }
  }
  return { deltas, error: reader.end(deltas) };
}

/** The recorded tool names, as test tools that record what they were called with. */
function recordingTools(seen: Array<{ name: string; args: unknown }>) {
  return definePlugin({
    manifest: { id: "stream-test-tools", version: "1.0.0", description: "tools the recorded streams call" },
    register(ctx) {
      for (const name of ["weather", "get_something_by_name", "run_command", "webSearchTool", "get_capital"]) {
        ctx.tools.add({
          name,
          description: `records ${name}`,
          readOnly: true,
          parameters: T.Object({}, { additionalProperties: true }),
          execute: async (args) => {
            seen.push({ name, args });
            return { content: `result of ${name}` };
          },
        });
      }
    },
  });
}

describe("provider compatibility: recorded streams of real providers", () => {
  it("has an expectation for every recorded stream, and a recording for every expectation", () => {
    expect(FILES.length).to.be.at.least(24);
    expect([...FILES].sort()).to.deep.equal(Object.keys(CASES).sort());
  });

  it("decodes every stream the same however its bytes are split across network reads", async () => {
    for (const file of FILES) {
      const bytes = read(file);
      const whole = await decodeInPieces(bytes, []);
      await fc.assert(
        fc.asyncProperty(fc.array(fc.nat(), { maxLength: 40 }), async (cuts) => {
          const split = await decodeInPieces(bytes, cuts);
          const joined = (r: typeof whole) => ({
            text: r.deltas.map((d) => (d.type === "content" ? d.text : "")).join(""),
            reasoning: r.deltas.map((d) => (d.type === "reasoning" ? d.text : "")).join(""),
            rest: r.deltas.filter((d) => d.type !== "content" && d.type !== "reasoning"),
            error: r.error,
          });
          expect(joined(split), file).to.deep.equal(joined(whole));
        }),
        { numRuns: 15 },
      );
    }
  });

  it("splits <think> and harmony reasoning out of content live: tags split anywhere, text before and after", () => {
    const run = (pieces: string[]) => {
      const reader = new ChunkReader();
      const out: ProviderDelta[] = [];
      for (const content of pieces) reader.read({ choices: [{ index: 0, delta: { content } }] }, out);
      reader.end(out);
      const of = (t: string) =>
        out
          .filter((d) => d.type === t)
          .map((d) => (d as { text: string }).text)
          .join("");
      return { text: of("content"), reasoning: of("reasoning") };
    };
    const cases: Array<[string, { text: string; reasoning: string }]> = [
      ["\n<think>\nplan a < b</think>\n\nAnswer <b>x</b>", { text: "Answer <b>x</b>", reasoning: "plan a < b" }],
      [
        "Answer first, then <think>literal</think>",
        { text: "Answer first, then <think>literal</think>", reasoning: "" },
      ],
      [
        "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>Done <|x|>.",
        { text: "Done <|x|>.", reasoning: "think" },
      ],
      ["a <thin", { text: "a <thin", reasoning: "" }],
    ];
    for (const [whole, want] of cases) {
      expect(run([whole]), whole).to.deep.equal(want);
      for (let i = 1; i < whole.length; i++) {
        for (let j = i; j < whole.length; j++) {
          expect(run([whole.slice(0, i), whole.slice(i, j), whole.slice(j)]), `${whole} @${i},${j}`).to.deep.equal(
            want,
          );
        }
      }
    }
  });

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
