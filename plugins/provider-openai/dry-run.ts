import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { httpsModule, sendChat } from "./chat-request.js";
import { decodeChatStream } from "./sse-decoder.js";

const BODY =
  'data: {"id":"w","object":"chat.completion.chunk","created":0,"model":"w","choices":[{"index":0,"delta":{"content":"w"},"finish_reason":null}]}\n\ndata: [DONE]\n\n';

/**
 * The provider's warm-up: one streamed chat request made exactly as a turn makes it (`sendChat`: the SDK builds
 * it, node:http carries it; the lean decoder reads it), but to a throwaway server on the loopback interface that
 * answers one chunk, never to the provider. The first real request then finds the SDK and node's HTTP client loaded
 * and the code of this path compiled: ~10-20 ms that the first turn of a fresh daemon paid before its first token
 * (docs/benchmarks.md, issue 16). The server is closed before this returns. For a provider reached over https,
 * node:https is loaded too (chat-request.ts loads it on first use).
 */
export async function dryRun(client: OpenAI, sdk: typeof import("openai")): Promise<void> {
  if (new URL(client.baseURL).protocol === "https:") httpsModule();
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream", connection: "close" });
      res.end(BODY);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  try {
    const { port } = server.address() as AddressInfo;
    // Not the configured key: nothing of the real credentials leaves the provider's own requests.
    const local = client.withOptions({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "warm-up", timeout: 5000 });
    const body = { model: "warm-up", messages: [{ role: "user" as const, content: "" }], stream: true as const };
    const response = await sendChat(local, sdk, body, new AbortController().signal);
    for await (const _ of decodeChatStream<ChatCompletionChunk>(response)) {
      // Read to the end.
    }
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
