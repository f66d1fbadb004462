import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { definePlugin, type ProviderDelta, T } from "../../core/index.js";
import { ChunkReader } from "../../plugins/provider-openai/chunk-reader.js";
import { decodeChatStream } from "../../plugins/provider-openai/sse-decoder.js";

/**
 * Provider compatibility: every recorded stream in test/fixtures/provider-streams (real providers and local servers,
 * verbatim; SOURCES.md says where each comes from) is replayed through the fake provider into a real daemon as the
 * first answer of a turn, and the assembled turn is checked: answer text, reasoning (streamed and stored once), tool
 * calls with ids and arguments, the follow-up request after the tool results, usage, and errors.
 */

export const DIR = fileURLToPath(new URL("../../../test/fixtures/provider-streams/", import.meta.url));
export const FILES = readdirSync(DIR).filter((f) => f.endsWith(".sse"));
export const read = (file: string) => readFileSync(`${DIR}${file}`);

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cacheReadTokens?: number;
}

/** Long texts are checked by their ends and length. */
export type Text = string | { starts: string; ends: string; length: number };

export interface Expected {
  text: Text;
  reasoning?: Text;
  calls?: Array<{ id: string; name: string; args: Record<string, unknown> }>;
  usage?: Usage;
  /** The turn ends with `error`, whose message carries the provider's own words. */
  error?: RegExp;
}

export const SF = { location: "San Francisco" };
export const u = (
  promptTokens: number,
  completionTokens: number,
  totalTokens: number,
  cacheReadTokens?: number,
): Usage => ({
  promptTokens,
  completionTokens,
  totalTokens,
  ...(cacheReadTokens !== undefined ? { cacheReadTokens } : {}),
});

export const CASES: Record<string, Expected> = {
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

export function expectText(actual: string, expected: Text | undefined, what: string): void {
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
export async function decodeInPieces(
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
export function recordingTools(seen: Array<{ name: string; args: unknown }>) {
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
