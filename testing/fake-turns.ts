import type { ChatCompletionCreateParams } from "openai/resources/chat/completions";

/* ---------- what a scripted turn is ---------- */

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

/** A chat request as the fake received it. */
export type ChatRequestBody = ChatCompletionCreateParams;

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
