import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ChatCompletionChunk, ChatCompletionCreateParams } from "openai/resources/chat/completions";

/**
 * A real OpenAI-compatible chat-completions server on 127.0.0.1 (port 0) that answers from a script.
 * Tests and benchmarks drive the daemon against it, so streaming, tool-call assembly, usage, failures and dropped
 * connections go through real sockets and the real `openai` SDK rather than mocks.
 */

/** One thing the fake does while answering a chat request. */
export type Step =
  /** A `delta.content` chunk. */
  | { content: string }
  /** A `delta.reasoning_content` chunk. */
  | { reasoning: string }
  /** One tool call, streamed as a header chunk (index, id, name) plus several argument chunks. */
  | { toolCall: { id: string; name: string; arguments: string } }
  /** Sent as the final usage chunk, only when the request asked for `stream_options.include_usage`. */
  | { usage: FakeUsage }
  /** Overrides the finish reason (default "stop", or "tool_calls" when the turn sent tool calls). */
  | { finish: string }
  /** Pauses before the next step. */
  | { delayMs: number }
  /** Holds the stream until the promise settles (a test releases it). */
  | { waitFor: PromiseLike<unknown> }
  /** Destroys the socket here: no finish reason, no usage, no `[DONE]`. */
  | { cut: true };

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /** Becomes `prompt_tokens_details.cached_tokens`. */
  cached_tokens?: number;
}

/** A successful (possibly cut) answer made of steps. */
export interface StreamTurn {
  steps: Step[];
  /** Pause between every chunk, for paced benchmark streams. */
  chunkDelayMs?: number;
}

/** The whole response is an HTTP error, e.g. `{status: 429, headers: {"retry-after": "1"}}`. */
export interface FailureTurn {
  status: number;
  /** JSON value (or raw string) of the body; defaults to an OpenAI-style `{error: {...}}`. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** The connection is reset after the request was read, before any response byte. */
export interface ResetTurn {
  resetBeforeFirstByte: true;
}

/**
 * A recorded response body replayed byte for byte as a 200 event stream (a real provider's stream, or garbage), in
 * writes of `pieceBytes` bytes (default: all at once) so chunks and tags are split across network reads.
 * `hang`: the connection then stays open without another byte (a stream that never ends).
 */
export interface RawTurn {
  raw: string | Uint8Array;
  pieceBytes?: number;
  hang?: boolean;
}

export type Turn = StreamTurn | FailureTurn | ResetTurn | RawTurn;
/** `script()` also takes a bare list of steps. */
export type TurnInput = Turn | Step[];

export type ChatRequestBody = ChatCompletionCreateParams;

/** Every HTTP request the fake received (chat and models). Headers are kept for assertions only, never logged. */
export interface RecordedCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** For chat requests: whether a scripted turn answered it (false: the default reply). */
  scripted?: boolean;
}

export interface ModelSpec {
  id: string;
  owned_by?: string;
  /** Extra fields some providers add (context_length, ...). */
  [extra: string]: unknown;
}

export interface FakeProviderOptions {
  /** The reply to unscripted chat requests (default "Hello from the fake provider."). */
  defaultReply?: string;
  /** When set, requests without `Authorization: Bearer <apiKey>` get a 401. */
  apiKey?: string;
}

export interface FakeProvider {
  /** Base URL ending in `/v1`, to give to an OpenAI client as `baseURL`. */
  readonly url: string;
  /** Parsed bodies of every POST /v1/chat/completions, in arrival order. */
  readonly requests: ChatRequestBody[];
  /** Every request with its headers, in arrival order. */
  readonly calls: RecordedCall[];
  /** Scripted turns not consumed yet (queue plus `scriptFor` entries). */
  readonly remaining: number;
  /** Queues turns answering the next chat requests in order. */
  script(...turns: TurnInput[]): void;
  /** Turns that answer, in order, the requests matching `predicate`, ahead of the queue. */
  scriptFor(predicate: (body: ChatRequestBody) => boolean, ...turns: TurnInput[]): void;
  /** Drops every scripted turn not consumed yet (a test that failed half-way leaves none to the next). */
  clearScript(): void;
  /** What GET /v1/models answers: a model list, or a failure. */
  setModels(models: Array<string | ModelSpec> | FailureTurn): void;
  /**
   * The next chat request body not yet handed out by `nextRequest` (a cursor over `requests`), waiting for it
   * to arrive if needed. Rejects after `timeoutMs`.
   */
  nextRequest(timeoutMs?: number): Promise<ChatRequestBody>;
  close(): Promise<void>;
}

interface Waiter {
  index: number;
  settle(body: ChatRequestBody | undefined, error?: Error): void;
}

/* ---------- turn builders ---------- */

let toolCallCounter = 0;

/** A turn streaming the given text chunks. */
export function text(...chunks: string[]): StreamTurn {
  return { steps: chunks.map((content) => ({ content })) };
}

/** A turn of steps. */
export function turn(...steps: Step[]): StreamTurn {
  return { steps };
}

/** A turn calling tools (finish reason "tool_calls"); ids are generated unless given. */
export function tools(
  calls: Array<{ name: string; args?: Record<string, unknown> | string; id?: string }>,
  opts: { before?: Step[]; after?: Step[] } = {},
): StreamTurn {
  const steps: Step[] = calls.map((c) => ({
    toolCall: {
      id: c.id ?? `call_fake_${++toolCallCounter}`,
      name: c.name,
      arguments: typeof c.args === "string" ? c.args : JSON.stringify(c.args ?? {}),
    },
  }));
  return { steps: [...(opts.before ?? []), ...steps, ...(opts.after ?? [])] };
}

/** A benchmark stream of `n` one-token content chunks, optionally paced, with usage. */
export function tokens(n: number, opts: { delayMs?: number; token?: string } = {}): StreamTurn {
  const content = opts.token ?? "tok ";
  const steps: Step[] = Array.from({ length: n }, () => ({ content }));
  steps.push({ usage: { prompt_tokens: 10, completion_tokens: n } });
  return { steps, chunkDelayMs: opts.delayMs };
}

/** A whole-response HTTP failure. */
export function fail(status: number, opts: { body?: unknown; headers?: Record<string, string> } = {}): FailureTurn {
  return { status, ...opts };
}

/** A recorded body replayed verbatim (see {@link RawTurn}). */
export function raw(body: string | Uint8Array, opts: { pieceBytes?: number; hang?: boolean } = {}): RawTurn {
  return { raw: body, ...opts };
}

/** A connection reset before the first response byte. */
export function reset(): ResetTurn {
  return { resetBeforeFirstByte: true };
}

/* ---------- the server ---------- */

export async function startFakeProvider(opts: FakeProviderOptions = {}): Promise<FakeProvider> {
  const requests: ChatRequestBody[] = [];
  const calls: RecordedCall[] = [];
  const queue: Turn[] = [];
  const matchers: Array<{ predicate: (body: ChatRequestBody) => boolean; turns: Turn[] }> = [];
  let models: Array<string | ModelSpec> | FailureTurn = ["fake-model"];
  let cursor = 0;
  const waiters: Waiter[] = [];
  const defaultReply = opts.defaultReply ?? "Hello from the fake provider.";

  const takeTurn = (body: ChatRequestBody): { turn: Turn; scripted: boolean } => {
    for (const m of matchers) {
      if (m.turns.length > 0 && m.predicate(body)) return { turn: m.turns.shift() as Turn, scripted: true };
    }
    const next = queue.shift();
    return next ? { turn: next, scripted: true } : { turn: text(defaultReply), scripted: false };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req);
    const path = new URL(req.url ?? "/", "http://fake").pathname.replace(/\/+$/, "");
    let body: unknown;
    try {
      body = raw.length > 0 ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    const call: RecordedCall = { method: req.method ?? "GET", path, headers: { ...req.headers }, body };
    calls.push(call);
    const isChat = call.method === "POST" && path === "/v1/chat/completions";
    if (isChat) {
      requests.push(body as ChatRequestBody);
      for (const w of waiters.filter((x) => x.index < requests.length)) w.settle(requests[w.index]);
    }
    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      return sendFailure(res, { status: 401 });
    }
    if (isChat) {
      const { turn: t, scripted } = takeTurn(body as ChatRequestBody);
      call.scripted = scripted;
      return answerChat(t, body as ChatRequestBody, res);
    }
    if (call.method === "GET" && path === "/v1/models") {
      if (!Array.isArray(models)) return sendFailure(res, models);
      const data = models.map((m) => {
        const spec = typeof m === "string" ? { id: m } : m;
        return { object: "model", created: 0, owned_by: "fake", ...spec };
      });
      return sendJson(res, 200, { object: "list", data });
    }
    sendJson(res, 404, { error: { message: `fake provider: no route ${call.method} ${path}`, type: "not_found" } });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `fake provider bug: ${String(err)}` } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const toTurn = (t: TurnInput): Turn => (Array.isArray(t) ? { steps: t } : t);

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    calls,
    get remaining() {
      return queue.length + matchers.reduce((n, m) => n + m.turns.length, 0);
    },
    script(...turns) {
      queue.push(...turns.map(toTurn));
    },
    scriptFor(predicate, ...turns) {
      matchers.push({ predicate, turns: turns.map(toTurn) });
    },
    clearScript() {
      queue.length = 0;
      matchers.length = 0;
    },
    setModels(list) {
      models = list;
    },
    nextRequest(timeoutMs = 10_000) {
      const index = cursor++;
      const ready = requests[index];
      if (ready !== undefined) return Promise.resolve(ready);
      return new Promise<ChatRequestBody>((resolve, reject) => {
        const waiter: Waiter = {
          index,
          settle: (b, e) => {
            clearTimeout(timer);
            waiters.splice(waiters.indexOf(waiter), 1);
            if (b) resolve(b);
            else reject(e);
          },
        };
        const timer = setTimeout(
          () =>
            waiter.settle(
              undefined,
              new Error(`fake provider: chat request #${index + 1} did not arrive within ${timeoutMs} ms`),
            ),
          timeoutMs,
        );
        waiters.push(waiter);
      });
    },
    async close() {
      for (const w of [...waiters]) w.settle(undefined, new Error("fake provider closed"));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/* ---------- responses ---------- */

async function answerChat(t: Turn, body: ChatRequestBody, res: ServerResponse): Promise<void> {
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

function sendFailure(res: ServerResponse, f: FailureTurn): void {
  const [type, message] = ERROR_TYPES[f.status] ?? ["server_error", "The server had an error"];
  const body = f.body ?? { error: { message, type, code: null, param: null } };
  const payload = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(f.status, { "content-type": "application/json", ...f.headers });
  res.end(payload);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/* ---------- small utilities ---------- */

function readBody(req: IncomingMessage): Promise<string> {
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
