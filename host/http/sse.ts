import type { ServerResponse } from "node:http";
import type { SseStream } from "../../core/routes.js";

const HEARTBEAT_MS = 15_000;
const PING = Buffer.from(": ping\n\n");

/**
 * The encoded frame of the last `send`: every client of a session is sent the very same `data` string in a row,
 * so a frame is encoded once for all of them, and their sockets write the same bytes.
 */
let lastFrame: { data: string; id: string | number | undefined; bytes: Buffer } | undefined;

/** Frames from this size on are shared between clients while any socket still holds them (see `bigFrames`). */
export const BIG_FRAME_BYTES = 64 * 1024;
/** Pending frames are joined into one write only up to this size (a join copies; big frames are written as is). */
const JOIN_LIMIT = 64 * 1024;

/**
 * The last join: clients that keep up hold the very same frames each tick (one encoding each, see `encodeFrame`),
 * so with many clients on one session the frames are joined once per tick, not once per client.
 */
let lastJoin: { parts: Buffer[]; bytes: Buffer } | undefined;

function joinFrames(parts: Buffer[], length: number): Buffer {
  const last = lastJoin;
  if (last !== undefined && last.parts.length === parts.length && last.parts.every((b, i) => b === parts[i])) {
    return last.bytes;
  }
  const bytes = Buffer.concat(parts, length);
  lastJoin = { parts, bytes };
  return bytes;
}

/**
 * Large frames in flight, by event id and content: clients caught up from the log at different moments (each read
 * gives a new string) still write one shared Buffer, so a large message costs its size once, not once per slow
 * client. Weak: a frame is gone as soon as no socket holds it any more.
 */
const bigFrames = new Map<string, WeakRef<Buffer>>();
const MAX_BIG_FRAMES = 256;

function bigFrameKey(data: string, id: string | number): string {
  // The id (a session's or the feed's sequence number) and the head of the JSON, which names the session and
  // repeats the seq, identify the event; the length guards the rest.
  return `${id}:${data.length}:${data.slice(0, 160)}`;
}

function encodeFrame(data: string, id: string | number | undefined): Buffer {
  if (lastFrame !== undefined && lastFrame.id === id && lastFrame.data === data) return lastFrame.bytes;
  const big = id !== undefined && data.length >= BIG_FRAME_BYTES ? bigFrameKey(data, id) : undefined;
  let bytes = big === undefined ? undefined : bigFrames.get(big)?.deref();
  if (bytes === undefined) {
    bytes = Buffer.from(id === undefined ? `data: ${data}\n\n` : `id: ${id}\ndata: ${data}\n\n`);
    if (big !== undefined) {
      if (bigFrames.size >= MAX_BIG_FRAMES) {
        for (const [k, ref] of bigFrames) if (ref.deref() === undefined) bigFrames.delete(k);
        if (bigFrames.size >= MAX_BIG_FRAMES) bigFrames.delete(bigFrames.keys().next().value as string);
      }
      bigFrames.set(big, new WeakRef(bytes));
    }
  }
  lastFrame = { data, id, bytes };
  return bytes;
}

/**
 * One SSE connection. Frames sent during one tick are joined and written once, on `process.nextTick`: the moment
 * Node's HTTP response would uncork its socket anyway, so nothing waits longer than before, but a burst of deltas
 * costs one chunked write (and one syscall) instead of one per frame. The bytes Node buffers for a slow client plus
 * the frames not yet written are bounded by `maxQueueBytes`: past it `send` refuses the frame and the caller catches
 * the client up later (from the log).
 */
export class HttpSseStream implements SseStream {
  private closeFns: Array<() => void> = [];
  private drainFns: Array<() => void> = [];
  private _closed = false;
  /** Frames of this tick, not yet handed to the response. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** An upper bound of res.writableLength (grown by each write, refreshed from Node only near the queue bound). */
  private written = 0;
  private flushQueued = false;
  private waitingForDrain = false;

  constructor(
    private readonly res: ServerResponse,
    readonly lastEventId: string | undefined,
    private readonly maxQueueBytes: number,
    extraHeaders: Record<string, string>,
  ) {
    // The body ends when the connection does (`Connection: close`), not in chunks: frames then go to the socket as
    // they are, one write per client and flush, without the chunk framing Node's response adds to every write (a
    // quarter of the CPU of fanning a token out to many clients).
    res.useChunkedEncodingByDefault = false;
    res.shouldKeepAlive = false;
    res.writeHead(200, {
      ...extraHeaders,
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache, no-transform",
      Connection: "close",
      "X-Accel-Buffering": "no",
    });
    // A short reconnection delay for EventSource clients (their default is 3 s).
    res.write(": connected\nretry: 1000\n\n");
    this.written = res.writableLength;
    res.on("close", () => this.markClosed());
  }

  get closed(): boolean {
    return this._closed;
  }

  /** Bytes written but not yet taken by the kernel, plus frames of this tick not yet written. */
  get backlog(): number {
    return this.res.writableLength + this.pendingBytes;
  }

  send(data: string, id?: string | number): boolean {
    if (this._closed) return false;
    const frame = encodeFrame(data, id);
    // An empty queue always takes the frame, so one oversized frame cannot wedge the stream. The exact backlog is
    // read only near the bound (Node computes it on every read).
    let queued = this.written + this.pendingBytes;
    if (queued > 0 && queued + frame.length > this.maxQueueBytes) {
      this.written = this.res.writableLength;
      queued = this.written + this.pendingBytes;
      if (queued > 0 && queued + frame.length > this.maxQueueBytes) return false;
    }
    this.enqueue(frame);
    return true;
  }

  heartbeat(): void {
    if (!this._closed && this.backlog < this.maxQueueBytes) this.enqueue(PING);
  }

  onDrain(fn: () => void): void {
    if (this._closed) return;
    this.drainFns.push(fn);
    // With frames pending, the flush decides; otherwise wait for the response's own 'drain' (or call back at once
    // when it is not over its high-water mark, e.g. after a write that the kernel took whole).
    if (!this.flushQueued) this.awaitDrain(!this.res.socket?.writableNeedDrain);
  }

  onClose(fn: () => void): void {
    if (this._closed) fn();
    else this.closeFns.push(fn);
  }

  close(): void {
    if (this._closed) return;
    this.flush();
    this.res.end();
    this.markClosed();
  }

  private enqueue(bytes: Buffer): void {
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueFlush(this);
    }
  }

  /** Writes the frames of this tick in one go. */
  flush(): void {
    this.flushQueued = false;
    if (this._closed || this.pending.length === 0) return;
    const pending = this.pending;
    const bytes = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    // Straight to the socket (the headers went with the first write, see the constructor).
    const socket = this.res.socket;
    if (!socket) return;
    let below: boolean;
    if (pending.length === 1 || bytes <= JOIN_LIMIT) {
      below = socket.write(pending.length === 1 ? (pending[0] as Buffer) : joinFrames(pending, bytes));
    } else {
      // Joining would copy a large (shared) frame once per client: written one by one, in one corked batch.
      below = true;
      socket.cork();
      for (const b of pending) below = socket.write(b);
      socket.uncork();
    }
    this.written += bytes;
    if (this.drainFns.length > 0) this.awaitDrain(below);
  }

  private awaitDrain(alreadyBelow: boolean): void {
    if (this.waitingForDrain) return;
    this.waitingForDrain = true;
    const run = () => {
      this.waitingForDrain = false;
      const fns = this.drainFns;
      this.drainFns = [];
      if (this._closed) return;
      for (const fn of fns) fn();
    };
    const socket = this.res.socket;
    if (alreadyBelow || !socket) setImmediate(run);
    else socket.once("drain", run);
  }

  private markClosed(): void {
    if (this._closed) return;
    this._closed = true;
    this.pending = [];
    this.pendingBytes = 0;
    this.drainFns = [];
    const fns = this.closeFns;
    this.closeFns = [];
    for (const fn of fns) fn();
  }
}

/** Streams with frames pending, flushed together in one `process.nextTick` (one per tick, not one per stream). */
let dirty: HttpSseStream[] = [];

function queueFlush(stream: HttpSseStream): void {
  if (dirty.push(stream) === 1) process.nextTick(flushDirty);
}

function flushDirty(): void {
  const streams = dirty;
  dirty = [];
  for (const s of streams) s.flush();
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
