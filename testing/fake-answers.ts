import type { IncomingMessage, ServerResponse } from "node:http";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { ChatRequestBody, FailureTurn, FakeUsage, RawTurn, StreamTurn, Turn } from "./fake-turns.js";

/** How the fake provider answers: a scripted turn streamed (or folded into one reply), replayed, failed or cut. */

/* ---------- responses ---------- */

export async function answerChat(t: Turn, body: ChatRequestBody, res: ServerResponse): Promise<void> {
  if ("resetBeforeFirstByte" in t) {
    // RST rather than FIN so clients see ECONNRESET, as with a crashing upstream.
    res.socket?.resetAndDestroy();
    return;
  }
  if ("status" in t) return sendFailure(res, t);
  if ("raw" in t) return replay(t, res);
  if (body.stream === true) return streamTurn(t, body, res);
  return completeTurn(t, body, res);
}

/** Aborted when the client goes away, so delays and waits do not outlive the connection. */
function clientGone(res: ServerResponse): AbortSignal {
  const ac = new AbortController();
  res.on("close", () => ac.abort());
  return ac.signal;
}

async function streamTurn(t: StreamTurn, body: ChatRequestBody, res: ServerResponse): Promise<void> {
  const gone = clientGone(res);
  const id = `chatcmpl-fake-${Date.now().toString(36)}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: ChatCompletionChunk["choices"], extra: Partial<ChatCompletionChunk> = {}) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: body.model, choices, ...extra })}\n\n`;
  let sentRole = false;
  const delta = (d: Record<string, unknown>) => {
    const withRole = sentRole ? d : { role: "assistant", ...d };
    sentRole = true;
    return chunk([{ index: 0, delta: withRole, finish_reason: null }] as ChatCompletionChunk["choices"]);
  };

  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  let toolIndex = 0;
  let finish: string | undefined;
  let usage: FakeUsage | undefined;
  for (const step of t.steps) {
    if (gone.aborted) return;
    const frames: string[] = [];
    if ("content" in step) frames.push(delta({ content: step.content }));
    else if ("reasoning" in step) frames.push(delta({ reasoning_content: step.reasoning }));
    else if ("toolCall" in step) {
      const { id: callId, name, arguments: args } = step.toolCall;
      const index = toolIndex++;
      frames.push(delta({ tool_calls: [{ index, id: callId, type: "function", function: { name, arguments: "" } }] }));
      for (const part of splitInThree(args))
        frames.push(delta({ tool_calls: [{ index, function: { arguments: part } }] }));
    } else if ("usage" in step) usage = step.usage;
    else if ("finish" in step) finish = step.finish;
    else if ("delayMs" in step) await hold(step.delayMs, gone);
    else if ("waitFor" in step) await hold(step.waitFor, gone);
    else if ("cut" in step) {
      res.socket?.destroy();
      return;
    }
    for (const frame of frames) {
      if (t.chunkDelayMs) await hold(t.chunkDelayMs, gone);
      if (gone.aborted) return;
      await write(res, frame);
    }
  }
  if (gone.aborted) return;
  const reason = finish ?? (toolIndex > 0 ? "tool_calls" : "stop");
  await write(res, chunk([{ index: 0, delta: {}, finish_reason: reason }] as ChatCompletionChunk["choices"]));
  if (usage && body.stream_options?.include_usage) await write(res, chunk([], { usage: wireUsage(usage) }));
  res.end("data: [DONE]\n\n");
}

async function replay(t: RawTurn, res: ServerResponse): Promise<void> {
  const gone = clientGone(res);
  const bytes = typeof t.raw === "string" ? Buffer.from(t.raw, "utf8") : t.raw;
  const size = t.pieceBytes && t.pieceBytes > 0 ? t.pieceBytes : bytes.length;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  for (let at = 0; at < bytes.length && !gone.aborted; at += size) await write(res, bytes.subarray(at, at + size));
  if (t.hang) await hold(new Promise(() => {}), gone);
  else res.end();
}

/** The non-streaming answer (compaction summaries): the turn's steps folded into one message. */
async function completeTurn(t: StreamTurn, body: ChatRequestBody, res: ServerResponse): Promise<void> {
  const gone = clientGone(res);
  let content = "";
  let reasoning = "";
  const toolCalls: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }> = [];
  let finish: string | undefined;
  let usage: FakeUsage = { prompt_tokens: 0, completion_tokens: 0 };
  for (const step of t.steps) {
    if ("content" in step) content += step.content;
    else if ("reasoning" in step) reasoning += step.reasoning;
    else if ("toolCall" in step) toolCalls.push({ id: step.toolCall.id, type: "function", function: step.toolCall });
    else if ("usage" in step) usage = step.usage;
    else if ("finish" in step) finish = step.finish;
    else if ("delayMs" in step) await hold(step.delayMs, gone);
    else if ("waitFor" in step) await hold(step.waitFor, gone);
    else if ("cut" in step) {
      res.socket?.destroy();
      return;
    }
    if (gone.aborted) return;
  }
  const message: Record<string, unknown> = { role: "assistant", content: content || null };
  if (reasoning) message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  sendJson(res, 200, {
    id: `chatcmpl-fake-${Date.now().toString(36)}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{ index: 0, message, finish_reason: finish ?? (toolCalls.length > 0 ? "tool_calls" : "stop") }],
    usage: wireUsage(usage),
  });
}

function wireUsage(u: FakeUsage): NonNullable<ChatCompletionChunk["usage"]> {
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    ...(u.cached_tokens !== undefined ? { prompt_tokens_details: { cached_tokens: u.cached_tokens } } : {}),
  };
}

const ERROR_TYPES: Record<number, [string, string]> = {
  400: ["invalid_request_error", "Bad request"],
  401: ["invalid_request_error", "Incorrect API key provided"],
  403: ["permission_denied", "Access denied"],
  404: ["not_found", "Not found"],
  429: ["rate_limit_exceeded", "Rate limit reached"],
};

export function sendFailure(res: ServerResponse, f: FailureTurn): void {
  const [type, message] = ERROR_TYPES[f.status] ?? ["server_error", "The server had an error"];
  const body = f.body ?? { error: { message, type, code: null, param: null } };
  const payload = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(f.status, { "content-type": "application/json", ...f.headers });
  res.end(payload);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/* ---------- small utilities ---------- */

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (b: Buffer) => parts.push(b));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

/** Resolves once the chunk reached the socket, so a later `cut` cannot drop it and fast streams get backpressure. */
function write(res: ServerResponse, data: string | Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    res.write(data, () => resolve());
  });
}

/** Splits tool arguments so clients must assemble them from several deltas. */
function splitInThree(s: string): string[] {
  if (s.length < 3) return [s];
  const a = Math.ceil(s.length / 3);
  return [s.slice(0, a), s.slice(a, 2 * a), s.slice(2 * a)];
}

/** Resolves after a delay (ms) or once a promise settles, and at once when the client went away. */
function hold(what: number | PromiseLike<unknown>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = typeof what === "number" ? setTimeout(done, what) : undefined;
    if (typeof what !== "number") Promise.resolve(what).then(done, done);
    if (signal.aborted) done();
    else signal.addEventListener("abort", done, { once: true });
  });
}
