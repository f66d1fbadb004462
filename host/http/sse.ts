import type { ServerResponse } from "node:http";
import type { SseStream } from "../../core/routes.js";

const HEARTBEAT_MS = 15_000;

/**
 * One SSE connection. Frames go straight to the socket; the bytes Node buffers for a slow client are bounded by
 * `maxQueueBytes`: past it `send` refuses the frame and the caller catches the client up later (from the log).
 */
export class HttpSseStream implements SseStream {
  private closeFns: Array<() => void> = [];
  private _closed = false;

  constructor(
    private readonly res: ServerResponse,
    readonly lastEventId: string | undefined,
    private readonly maxQueueBytes: number,
    extraHeaders: Record<string, string>,
  ) {
    res.writeHead(200, {
      ...extraHeaders,
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache, no-transform",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    // A short reconnection delay for EventSource clients (their default is 3 s).
    res.write(": connected\nretry: 1000\n\n");
    res.on("close", () => this.markClosed());
  }

  get closed(): boolean {
    return this._closed;
  }

  /** Bytes written but not yet taken by the kernel. */
  get backlog(): number {
    return this.res.writableLength;
  }

  send(data: string, id?: string | number): boolean {
    if (this._closed) return false;
    const frame = id === undefined ? `data: ${data}\n\n` : `id: ${id}\ndata: ${data}\n\n`;
    // An empty queue always takes the frame, so one oversized frame cannot wedge the stream.
    const queued = this.res.writableLength;
    if (queued > 0 && queued + frame.length > this.maxQueueBytes) return false;
    this.res.write(frame);
    return true;
  }

  heartbeat(): void {
    if (!this._closed && this.res.writableLength < this.maxQueueBytes) this.res.write(": ping\n\n");
  }

  onDrain(fn: () => void): void {
    if (this._closed) return;
    this.res.once("drain", fn);
  }

  onClose(fn: () => void): void {
    if (this._closed) fn();
    else this.closeFns.push(fn);
  }

  close(): void {
    if (this._closed) return;
    this.res.end();
    this.markClosed();
  }

  private markClosed(): void {
    if (this._closed) return;
    this._closed = true;
    const fns = this.closeFns;
    this.closeFns = [];
    for (const fn of fns) fn();
  }
}

/** Tracks open streams: one shared heartbeat timer for all, and closing them all at shutdown. */
export class SseHub {
  private readonly streams = new Set<HttpSseStream>();
  private timer: NodeJS.Timeout | undefined;

  add(stream: HttpSseStream): void {
    this.streams.add(stream);
    stream.onClose(() => this.streams.delete(stream));
    if (!this.timer) {
      this.timer = setInterval(() => {
        for (const s of this.streams) s.heartbeat();
      }, HEARTBEAT_MS);
      this.timer.unref();
    }
  }

  get size(): number {
    return this.streams.size;
  }

  /** Bytes queued in memory for all SSE clients together (each bounded by the per-client queue limit). */
  get queuedBytes(): number {
    let n = 0;
    for (const s of this.streams) n += s.backlog;
    return n;
  }

  closeAll(): void {
    for (const s of [...this.streams]) s.close();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
