import { type Disposable, toDisposable } from "./disposable.js";
import type { FrameListener } from "./event-log-types.js";
import type { StoredEvent } from "./session-types.js";

/** Reads of events another daemon appended go in pages of this many. */
const READ_PAGE = 500;
/** A read that failed (the database is away) is tried again after this long. */
const RETRY_READ_MS = 250;

/**
 * One numbered log as this daemon follows it (a session's, or the feed): what is known to be stored, what the local
 * subscribers were given, and the frames this daemon appended itself (handed out without reading them back).
 * Subscribers get every number once, in order: from those frames while they follow on, else read from the store.
 */
export class Channel {
  /** The last number known to be stored: by this daemon's appends, the doorbell or a read of the position. */
  known = 0;
  /** The last number handed to the subscribers (equal to `known` while there are none). */
  delivered = 0;
  readonly listeners = new Set<FrameListener>();
  /** This daemon's appends in flight: a gap is read only after them (their result usually fills it). */
  inflight = 0;
  /** Set while the position may be behind (never read, or the doorbell was away): the next `load` reads it. */
  stale = false;
  /** Touched since the last eviction pass. */
  used = true;
  loading: Promise<void> | undefined;
  private readonly frames = new Map<number, string>();
  private reading = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    /** Stored events after `after` (at most `limit`); `upTo` is the last number known to be stored. */
    private readonly read: (after: number, limit: number, upTo: number) => Promise<StoredEvent[]>,
    private readonly onReadError: (err: unknown) => void,
  ) {}

  get idle(): boolean {
    return this.listeners.size === 0 && this.inflight === 0 && !this.loading && !this.reading;
  }

  /** The log has events up to `seq`. */
  advance(seq: number): void {
    if (seq > this.known) this.known = seq;
    this.pump();
  }

  /** This daemon stored `jsons` with the numbers from `first` on. */
  appended(first: number, jsons: string[]): void {
    if (this.listeners.size > 0) {
      for (let i = 0; i < jsons.length; i++) {
        if (first + i > this.delivered) this.frames.set(first + i, jsons[i] as string);
      }
    }
    this.advance(first + jsons.length - 1);
  }

  /** Hands out everything known, in order. */
  pump(): void {
    while (this.delivered < this.known) {
      if (this.listeners.size === 0) {
        this.delivered = this.known;
        this.frames.clear();
        return;
      }
      const next = this.delivered + 1;
      const json = this.frames.get(next);
      if (json === undefined) break;
      this.frames.delete(next);
      this.deliver(next, json);
    }
    if (this.delivered >= this.known || this.reading || this.inflight > 0 || this.retry) return;
    this.reading = true;
    const upTo = this.known;
    this.read(this.delivered, READ_PAGE, upTo).then(
      (rows) => {
        this.reading = false;
        for (const r of rows) if (r.seq > this.delivered && this.listeners.size > 0) this.deliver(r.seq, r.json);
        // Numbers known but not found were stored with a session that is gone since: nothing to hand out.
        if (rows.length < READ_PAGE && this.delivered < upTo) this.delivered = upTo;
        for (const seq of this.frames.keys()) if (seq <= this.delivered) this.frames.delete(seq);
        this.pump();
      },
      (err: unknown) => {
        this.reading = false;
        this.onReadError(err);
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.pump();
        }, RETRY_READ_MS);
        this.retry.unref?.();
      },
    );
  }

  private deliver(seq: number, json: string): void {
    this.delivered = seq;
    // A read may return rows committed after the ring it answered: they are known now.
    if (seq > this.known) this.known = seq;
    for (const fn of this.listeners) fn(seq, json);
  }

  subscribe(fn: FrameListener): Disposable {
    this.listeners.add(fn);
    return toDisposable(() => this.listeners.delete(fn));
  }

  stop(): void {
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
  }
}
