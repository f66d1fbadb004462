/** One server-sent event as received. `json` is the parsed `data` (undefined when it is not JSON). */
export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary event fields
  json: any;
}

const taps = new Set<(frame: SseFrame, url: string) => void>();

interface Waiter {
  pred: (f: SseFrame) => boolean;
  from: number;
  resolve: (f: SseFrame) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * A small SSE client for tests: collects every frame, lets a test await a frame matching a predicate (never a
 * sleep), and reconnects with Last-Event-ID when asked.
 */
export class SseClient {
  /**
   * Called with every frame any client receives (e.g. to check each one against the OpenAPI document's
   * `SessionEvent` schema across a whole suite). Returns a function that removes the tap.
   */
  static tap(fn: (frame: SseFrame, url: string) => void): () => void {
    taps.add(fn);
    return () => taps.delete(fn);
  }

  readonly frames: SseFrame[] = [];
  comments = 0;
  status = 0;
  private readonly waiters = new Set<Waiter>();
  private readonly ctrl = new AbortController();
  private endedFlag = false;
  private endWaiters: Array<() => void> = [];

  private constructor(readonly url: string) {}

  private resumeFn: (() => void) | undefined;

  /** `paused`: do not read the body until `resume()` (a stalled client, for backpressure tests). */
  static async open(
    url: string,
    opts: { token?: string; lastEventId?: string | number; headers?: Record<string, string>; paused?: boolean } = {},
  ) {
    const c = new SseClient(url);
    const headers: Record<string, string> = { accept: "text/event-stream", ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.lastEventId !== undefined) headers["last-event-id"] = String(opts.lastEventId);
    const res = await fetch(url, { headers, signal: c.ctrl.signal });
    c.status = res.status;
    if (!res.ok || !res.body) {
      c.endedFlag = true;
      return c;
    }
    const gate = opts.paused ? new Promise<void>((r) => (c.resumeFn = r)) : Promise.resolve();
    void gate.then(() => c.pump(res.body as ReadableStream<Uint8Array>));
    return c;
  }

  get ended(): boolean {
    return this.endedFlag;
  }

  /** Frames whose JSON has the given type. */
  ofType(type: string): SseFrame[] {
    return this.frames.filter((f) => f.json?.type === type);
  }

  /** Resolves with the first frame (from index `from`) matching `pred`; rejects after `timeoutMs`. */
  waitFor(pred: (f: SseFrame) => boolean, timeoutMs = 10_000, from = 0): Promise<SseFrame> {
    const hit = this.frames.slice(from).find(pred);
    if (hit) return Promise.resolve(hit);
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        pred,
        from,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(w);
          reject(new Error(`SSE: no matching frame within ${timeoutMs} ms on ${this.url}; saw ${this.summary()}`));
        }, timeoutMs),
      };
      this.waiters.add(w);
    });
  }

  /**
   * What was received, short enough for a failure message however many frames came: the types in order, repeats
   * counted (`[status,token×500,end]`), and the ids' range with where they skip or go back.
   */
  summary(): string {
    const runs: string[] = [];
    let last: string | undefined;
    let count = 0;
    const flush = () => last !== undefined && runs.push(count > 1 ? `${last}×${count}` : last);
    for (const f of this.frames) {
      const type = String(f.json?.type ?? f.data);
      if (type === last) count++;
      else {
        flush();
        last = type;
        count = 1;
      }
    }
    flush();
    const ids = this.frames.filter((f) => f.id !== undefined).map((f) => Number(f.id));
    const breaks: string[] = [];
    for (let i = 1; i < ids.length; i++) {
      if (ids[i] !== (ids[i - 1] as number) + 1) breaks.push(`${ids[i - 1]}→${ids[i]}`);
    }
    const shown = runs.length > 40 ? [...runs.slice(0, 20), "…", ...runs.slice(-20)] : runs;
    const range = ids.length > 0 ? `; ids ${ids[0]}..${ids.at(-1)}` : "";
    const skips = breaks.length > 0 ? `, not consecutive at ${breaks.slice(0, 10).join(" ")}` : "";
    return `[${shown.join(",")}] (${this.frames.length} frames${range}${skips})`;
  }

  /** Waits for an event of `type` (optionally after index `from`). */
  waitForType(type: string, timeoutMs?: number, from = 0): Promise<SseFrame> {
    return this.waitFor((f) => f.json?.type === type, timeoutMs, from);
  }

  /** Resolves when the server ends the stream. */
  waitEnd(timeoutMs = 10_000): Promise<void> {
    if (this.endedFlag) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error("SSE stream did not end")), timeoutMs);
      this.endWaiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  resume(): void {
    this.resumeFn?.();
  }

  close(): void {
    this.ctrl.abort();
    this.finish();
  }

  private finish(): void {
    if (this.endedFlag) return;
    this.endedFlag = true;
    for (const fn of this.endWaiters) fn();
    this.endWaiters = [];
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buf = "";
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let idx = buf.indexOf("\n\n");
        while (idx >= 0) {
          this.parseBlock(buf.slice(0, idx));
          buf = buf.slice(idx + 2);
          idx = buf.indexOf("\n\n");
        }
      }
    } catch {
      // aborted by close() or the server went away
    }
    this.finish();
  }

  private parseBlock(block: string): void {
    let id: string | undefined;
    let event: string | undefined;
    const data: string[] = [];
    let onlyComments = true;
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) {
        this.comments++;
        continue;
      }
      onlyComments = false;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "id") id = value;
      else if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    if (onlyComments || data.length === 0) return;
    const text = data.join("\n");
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const frame: SseFrame = { id, event, data: text, json };
    this.frames.push(frame);
    for (const tap of taps) tap(frame, this.url);
    const index = this.frames.length - 1;
    for (const w of this.waiters) {
      if (index >= w.from && w.pred(frame)) {
        clearTimeout(w.timer);
        this.waiters.delete(w);
        w.resolve(frame);
      }
    }
  }
}
