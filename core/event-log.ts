import { type Disposable, toDisposable } from "./disposable.js";
import type { EventBus, SessionEvent } from "./events.js";
import type { Logger } from "./logger.js";
import type { StoredEvent } from "./session-types.js";
import type { EventToAppend, SessionStore } from "./store.js";

/** Deltas: replayable, batched to the store off the hot path, not part of the audit trail. */
const EPHEMERAL_TYPES = new Set(["token", "thinking", "tool_output", "editor_fs_request"]);

/** How many sequence numbers are reserved durably at a time (so a crash can never make a seq be reused). */
const RESERVE_BLOCK = 1000;
/** Sessions whose sequence state is kept in memory; idle ones beyond this are written back and dropped. */
const MAX_SEQ_STATES = 2000;

let lastMs = 0;
let lastIso = "";
/** `new Date().toISOString()`, formatted at most once per millisecond (deltas arrive many per millisecond). */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

export type FrameListener = (seq: number, json: string) => void;

interface SeqState {
  last: number;
  reserved: number;
}

/**
 * The per-session event log: gives every session event a sequence number that survives restarts, writes it to
 * the store, and hands the serialised frame to live subscribers. Durable events (and feed events) are written at
 * the end of the current tick, all in one transaction: a turn start publishes several, and one commit each cost
 * more than the rest of the chat path. Deltas are written in batches (every `batchMs`). Reads through the log
 * (`replay`, `replayFeed`) write what is pending first. Each event is serialised exactly once.
 */
export class SessionEventLog {
  private readonly seqs = new Map<string, SeqState>();
  private readonly pending = new Map<string, EventToAppend[]>();
  private pendingFeed: Array<{ seq: number; ts: string; type: string; json: string }> = [];
  private readonly listeners = new Map<string, Set<FrameListener>>();
  private readonly feedListeners = new Set<FrameListener>();
  private flushTimer: NodeJS.Timeout | undefined;
  private flushSoon = false;
  private feedLast: number | undefined;

  constructor(
    private readonly store: SessionStore,
    private readonly bus: EventBus,
    private readonly log: Logger,
    private readonly batchMs = 15,
  ) {}

  /** Appends an event to the session's log and fans it out. Returns its sequence number. */
  publish(sessionId: string, event: SessionEvent): number {
    const seq = this.nextSeq(sessionId);
    // `{type, sessionId, seq, ...payload}`, built without rest/spread copies: this runs for every token.
    const wire: Record<string, unknown> = { type: event.type, sessionId, seq };
    // `seq` is always the event's own number: a payload cannot override it (a message's number is `messageSeq`).
    for (const key in event) if (key !== "type" && key !== "seq") wire[key] = (event as Record<string, unknown>)[key];
    const json = JSON.stringify(wire);
    const ephemeral = EPHEMERAL_TYPES.has(event.type);
    let queue = this.pending.get(sessionId);
    if (!queue) {
      queue = [];
      this.pending.set(sessionId, queue);
    }
    queue.push({ seq, ts: isoNow(), type: event.type, json, ephemeral });
    if (ephemeral) this.scheduleFlush();
    else this.scheduleSoon();

    const subs = this.listeners.get(sessionId);
    if (subs) for (const fn of subs) fn(seq, json);
    this.bus.emit({ type: "session.event", sessionId, seq, event: wire as SessionEvent });
    return seq;
  }

  /** The last sequence number given out for the session (0 when none). */
  currentSeq(sessionId: string): number {
    return this.state(sessionId).last;
  }

  /** Stored events after `afterSeq` (pending deltas are flushed first, so nothing is skipped). */
  replay(sessionId: string, afterSeq: number, limit: number): StoredEvent[] {
    this.flushSession(sessionId);
    return this.store.readEvents(sessionId, afterSeq, limit);
  }

  subscribe(sessionId: string, fn: FrameListener): Disposable {
    let set = this.listeners.get(sessionId);
    if (!set) {
      set = new Set();
      this.listeners.set(sessionId, set);
    }
    set.add(fn);
    return toDisposable(() => {
      set.delete(fn);
      if (set.size === 0 && this.listeners.get(sessionId) === set) this.listeners.delete(sessionId);
    });
  }

  /* ---- the all-sessions feed: lifecycle events with a global sequence ---- */

  publishFeed(event: SessionEvent & { sessionId: string }): number {
    if (this.feedLast === undefined) this.feedLast = this.store.feedSeq();
    const seq = ++this.feedLast;
    const { type, ...rest } = event;
    const json = JSON.stringify({ type, seq, ...rest });
    this.pendingFeed.push({ seq, ts: isoNow(), type: event.type, json });
    this.scheduleSoon();
    for (const fn of this.feedListeners) fn(seq, json);
    return seq;
  }

  feedSeq(): number {
    if (this.feedLast === undefined) this.feedLast = this.store.feedSeq();
    return this.feedLast;
  }

  replayFeed(afterSeq: number, limit: number): StoredEvent[] {
    this.flushFeed();
    return this.store.readFeed(afterSeq, limit);
  }

  subscribeFeed(fn: FrameListener): Disposable {
    this.feedListeners.add(fn);
    return toDisposable(() => this.feedListeners.delete(fn));
  }

  /** Drops in-memory state of a deleted session (its rows are gone with it). */
  forget(sessionId: string): void {
    this.pending.delete(sessionId);
    this.seqs.delete(sessionId);
  }

  /** Writes everything pending and releases unused reservations (clean shutdown keeps seqs contiguous). */
  close(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.flushAll();
    for (const [id, st] of this.seqs) {
      if (st.reserved > st.last) {
        try {
          this.store.reserveEventSeq(id, st.last);
        } catch {
          // session deleted meanwhile
        }
      }
    }
  }

  /** Writes every pending event (all sessions, and the feed) in one transaction when the store supports it. */
  flushAll(): void {
    if (this.pending.size === 0 && this.pendingFeed.length === 0) return;
    if (!this.store.batch || this.pending.size + (this.pendingFeed.length > 0 ? 1 : 0) <= 1) {
      for (const id of [...this.pending.keys()]) this.flushSession(id);
      this.flushFeed();
      return;
    }
    const all = [...this.pending];
    const feed = this.pendingFeed;
    this.pending.clear();
    this.pendingFeed = [];
    try {
      this.store.batch(() => {
        for (const [id, queue] of all) this.store.appendEvents(id, queue);
        for (const e of feed) this.store.appendFeed(e);
      });
    } catch {
      // One session's rows failed (deleted meanwhile?): write them one session at a time, so the others land.
      for (const [id, queue] of all) this.write(id, queue);
      this.pendingFeed = feed.concat(this.pendingFeed);
      this.flushFeed();
    }
  }

  private flushFeed(): void {
    if (this.pendingFeed.length === 0) return;
    const feed = this.pendingFeed;
    this.pendingFeed = [];
    try {
      if (this.store.batch) this.store.batch(() => this.appendFeed(feed));
      else this.appendFeed(feed);
    } catch (err) {
      this.log.error({ err, count: feed.length }, "could not persist feed events");
    }
  }

  private appendFeed(feed: Array<{ seq: number; ts: string; type: string; json: string }>): void {
    for (const e of feed) this.store.appendFeed(e);
  }

  private flushSession(sessionId: string): void {
    const queue = this.pending.get(sessionId);
    if (!queue || queue.length === 0) return;
    this.pending.delete(sessionId);
    this.write(sessionId, queue);
  }

  private write(sessionId: string, queue: EventToAppend[]): void {
    try {
      this.store.appendEvents(sessionId, queue);
    } catch (err) {
      this.log.error({ err, sessionId, count: queue.length }, "could not persist session events");
    }
  }

  /** Durable events: written once the current synchronous run (and its microtasks) is over. */
  private scheduleSoon(): void {
    if (this.flushSoon) return;
    this.flushSoon = true;
    process.nextTick(() => {
      this.flushSoon = false;
      this.flushAll();
    });
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flushAll();
    }, this.batchMs);
    this.flushTimer.unref?.();
  }

  private state(sessionId: string): SeqState {
    let st = this.seqs.get(sessionId);
    if (!st) {
      if (this.seqs.size >= MAX_SEQ_STATES) this.evictSeqStates();
      const reserved = this.store.eventSeqReserved(sessionId);
      st = { last: reserved, reserved };
      this.seqs.set(sessionId, st);
    }
    return st;
  }

  /**
   * Bounds the per-session memory (a daemon that has touched 100,000 sessions keeps 2,000 of them): the oldest
   * half without pending events or subscribers is dropped, its unused reservation released first, so the next
   * event continues exactly where it stopped.
   */
  private evictSeqStates(): void {
    let drop = Math.floor(MAX_SEQ_STATES / 2);
    for (const [id, st] of this.seqs) {
      if (drop === 0) break;
      if (this.pending.has(id) || this.listeners.has(id)) continue;
      try {
        if (st.reserved > st.last) this.store.reserveEventSeq(id, st.last);
      } catch {
        // deleted meanwhile: nothing to release
      }
      this.seqs.delete(id);
      drop--;
    }
  }

  private nextSeq(sessionId: string): number {
    const st = this.state(sessionId);
    st.last++;
    if (st.last > st.reserved) {
      st.reserved = st.last + RESERVE_BLOCK - 1;
      this.store.reserveEventSeq(sessionId, st.reserved);
    }
    return st.last;
  }
}
