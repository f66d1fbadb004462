/**
 * A lean decoder of the chat-completions event stream, over the raw response body (see chat-request.ts: the openai
 * SDK still builds the request, authenticates and maps HTTP errors); this replaces
 * its stream decoding (several nested async generators, a line decoder and a copy of the buffer per event), which
 * was the largest per-token cost of the daemon. One `TextDecoder` call per network read, synchronous line parsing,
 * and one async-generator step per read (yielding every chunk of that read at once).
 *
 * Semantics follow the SDK's `Stream.fromSSEResponse`: `data: [DONE]` ends the stream (later events are ignored), a
 * chunk carrying `error` (also under `event: error`) throws an `APIError`; `thread.*` events are not chat chunks.
 */

/** The SDK's `APIError` constructor (taken from the loaded SDK, which stays lazily imported). */
export type ApiErrorClass = new (
  status: number | undefined,
  error: object | undefined,
  message: string | undefined,
  headers: Headers | undefined,
) => Error;

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
  }
}

/** A streamed response: its body (a node response, or a web stream), and its headers for an error it reports. */
export interface ChatResponse {
  body: AsyncIterable<Uint8Array>;
  headers(): Headers;
}

/**
 * The JSON chunks of a streamed chat completion, one array per network read of the body. Reading stops (and the body
 * is destroyed) when the consumer stops early; an aborted request rejects the pending read.
 */
export async function* decodeChatStream<T>(response: ChatResponse, ApiError: ApiErrorClass): AsyncGenerator<T[]> {
  const parser = new SseEventParser();
  const events: SseEvent[] = [];
  let done = false;
  const decode = (bytes: Uint8Array | undefined): T[] => {
    parser.push(bytes, events);
    const chunks: T[] = [];
    for (const sse of events) {
      if (sse.data.startsWith("[DONE]")) {
        done = true;
        break;
      }
      if (sse.event?.startsWith("thread.")) continue;
      const data = JSON.parse(sse.data) as { error?: object };
      if (data?.error) throw new ApiError(undefined, data.error, undefined, response.headers());
      chunks.push(data as T);
    }
    events.length = 0;
    return chunks;
  };
  for await (const bytes of response.body) {
    // Events after [DONE] are ignored, but the body is read to its end (its connection is kept for the next call).
    if (done) continue;
    const chunks = decode(bytes);
    if (chunks.length > 0) yield chunks;
  }
  if (done) return;
  const chunks = decode(undefined);
  if (chunks.length > 0) yield chunks;
}
