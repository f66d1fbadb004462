/**
 * A lean decoder of the chat-completions event stream, over the raw response body (see chat-request.ts: the openai
 * SDK still builds the request, authenticates and maps HTTP errors); this replaces
 * its stream decoding (several nested async generators, a line decoder and a copy of the buffer per event), which
 * was the largest per-token cost of the daemon. One `TextDecoder` call per network read, synchronous line parsing,
 * and one async-generator step per read (yielding every chunk of that read at once).
 *
 * `data: [DONE]` ends the stream (later events are ignored); `thread.*` events are not chat chunks. A chunk carrying
 * `error` is passed on like any other (its usage counts too; chunk-reader.ts reports the error); the data of an
 * `event: error` that is not such a chunk becomes one. What is not an event stream of JSON chunks fails clearly.
 */

/** A failure of the stream itself (not JSON, no chunks, silence): not retried, its message is shown as is. */
export class StreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StreamError";
  }
}

interface SseEvent {
  event: string | null;
  data: string;
}

/** Splits text into server-sent events (lines end with LF, CRLF or CR; a blank line dispatches). */
export class SseEventParser {
  private rest = "";
  private data: string[] = [];
  private event: string | null = null;
  private readonly decoder = new TextDecoder();
  /** The first line that is no SSE field (a server answering HTML or plain JSON instead of a stream). */
  stray: string | undefined;

  /** Feeds one network read (`undefined`: the end of the stream) and appends the events it completes to `out`. */
  push(bytes: Uint8Array | undefined, out: SseEvent[]): void {
    const end = bytes === undefined;
    const text = this.rest + (end ? this.decoder.decode() : this.decoder.decode(bytes, { stream: true }));
    this.rest = "";
    const hasCr = text.includes("\r");
    let start = 0;
    while (start < text.length) {
      let lf = text.indexOf("\n", start);
      let next = lf + 1;
      if (hasCr) {
        const cr = text.indexOf("\r", start);
        if (cr >= 0 && (lf < 0 || cr < lf)) {
          // A CR as the last character may be the first half of a CRLF split across reads.
          if (cr === text.length - 1 && !end) break;
          lf = cr;
          next = text.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
        }
      }
      if (lf < 0) break;
      this.line(text.slice(start, lf), out);
      start = next;
    }
    if (start < text.length) {
      if (end) this.line(text.slice(start), out);
      else this.rest = text.slice(start);
    }
    if (end) this.line("", out);
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === "") {
      if (this.data.length > 0) out.push({ event: this.event, data: this.data.join("\n") });
      this.data = [];
      this.event = null;
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ":" comment (keep-alive)
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field !== "id" && field !== "retry") this.stray ??= line;
  }
}

/** A streamed response: its body (a node response, or a web stream), and its headers for an error it reports. */
export interface ChatResponse {
  body: AsyncIterable<Uint8Array>;
  headers(): Headers;
  /** Stops reading the body with `reason` (the pending read rejects with it). */
  cancel?(reason: Error): void;
}

export interface DecodeOptions {
  /**
   * How long the stream may go without a chunk (comments do not count) before it is abandoned with a
   * `StreamError`; needs `response.cancel`. Default: no bound.
   */
  idleTimeoutMs?: number;
}

const seconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`);

/** The first characters of what a server sent, for an error message. */
function preview(text: string): string {
  const t = text.trim().replace(/\s+/g, " ");
  return t.length > 80 ? `${t.slice(0, 80)}…` : t;
}

/**
 * The JSON chunks of a streamed chat completion, one array per network read of the body. Reading stops (and the body
 * is destroyed) when the consumer stops early; an aborted request rejects the pending read. Throws a `StreamError`
 * for data that is not JSON, a body without any chunk, and silence beyond `idleTimeoutMs`.
 */
export async function* decodeChatStream<T>(response: ChatResponse, options: DecodeOptions = {}): AsyncGenerator<T[]> {
  const parser = new SseEventParser();
  const events: SseEvent[] = [];
  let done = false;
  let seen = 0;
  const decode = (bytes: Uint8Array | undefined): T[] => {
    parser.push(bytes, events);
    const chunks: T[] = [];
    for (const sse of events) {
      if (sse.data.startsWith("[DONE]")) {
        done = true;
        break;
      }
      if (sse.event?.startsWith("thread.")) continue;
      let data: unknown;
      try {
        data = JSON.parse(sse.data);
      } catch {
        if (sse.event === "error") data = { error: { message: preview(sse.data) } };
        else {
          events.length = 0;
          throw new StreamError(`the provider sent a stream chunk that is not JSON: "${preview(sse.data)}"`);
        }
      }
      if (data === null || typeof data !== "object" || Array.isArray(data)) {
        events.length = 0;
        throw new StreamError(`the provider sent a stream chunk that is not a JSON object: "${preview(sse.data)}"`);
      }
      if (sse.event === "error" && !("error" in data)) data = { error: data };
      chunks.push(data as T);
    }
    seen += chunks.length;
    events.length = 0;
    return chunks;
  };
  const idle = options.idleTimeoutMs;
  const timer =
    idle !== undefined && response.cancel
      ? setTimeout(() => {
          response.cancel?.(
            new StreamError(`the provider sent no stream data for ${seconds(idle)}; the call was abandoned`),
          );
        }, idle)
      : undefined;
  try {
    for await (const bytes of response.body) {
      // Events after [DONE] are ignored, but the body is read to its end (its connection is kept for the next call).
      if (done) continue;
      const chunks = decode(bytes);
      if (chunks.length > 0) {
        timer?.refresh();
        yield chunks;
      }
    }
    if (done) return;
    const chunks = decode(undefined);
    if (chunks.length > 0) yield chunks;
    if (seen === 0 && !done) {
      const what = parser.stray === undefined ? "nothing" : `"${preview(parser.stray)}"`;
      throw new StreamError(`the provider's answer is not a chat-completions event stream: it sent ${what}`);
    }
  } finally {
    clearTimeout(timer);
  }
}
