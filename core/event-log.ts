import { type Disposable, toDisposable } from "./disposable.js";
import { EPHEMERAL_TYPES, evictUntouched, isoNow, isPromise } from "./event-log-common.js";
import type { EventLog, FrameListener } from "./event-log-types.js";
import type { EventBus, SessionEvent } from "./events.js";
import type { Logger } from "./logger.js";
import type { StoredEvent } from "./session-types.js";
import type { Awaitable, EventBatch, EventToAppend, FeedEventToAppend, SessionStore } from "./store.js";
import { runSteps, type Step, WriteChain } from "./write-chain.js";

export { EPHEMERAL_TYPES, evictUntouched, isoNow } from "./event-log-common.js";

/** How many sequence numbers are reserved durably at a time (so a crash can never make a seq be reused). */
const RESERVE_BLOCK = 1000;
/**
 * With an asynchronous store the next block is reserved this many numbers before the current one runs out, so the
 * reservation has landed before a number of the next block is given out.
 */
const RESERVE_AHEAD = RESERVE_BLOCK / 2;
/** Sessions whose sequence state is kept in memory; idle ones beyond this are written back and dropped. */
const MAX_SEQ_STATES = 2000;

interface SeqState {
  last: number;
  reserved: number;
  /** Published since the last eviction pass (kept by the next one). */
  used: boolean;
}

/**
 * The per-session event log: gives every session event a sequence number that survives restarts, writes it to
 * the store, and hands the serialised frame to live subscribers. Durable events (and feed events) are written at
 * the end of the current tick, all in one batch: a turn start publishes several, and one commit each cost more
 * than the rest of the chat path. Deltas are written in batches (every `batchMs`). Each event is serialised once.
 *
 * Publishing is synchronous (it runs for every token); writing is not assumed to be: the store may answer with
 * promises, so writes go out one after the other on a chain, reads through the log (`replay`, `replayFeed`) wait
 * for the writes issued before them, and `durable()` resolves once everything published so far is stored. A
 * session's sequence state is loaded once (`load`, which `SessionService.require`/`find` call) before its first
 * event; with a synchronous store it is also loaded on demand.
 */
export class SessionEventLog implements EventLog {
  private readonly seqs = new Map<string, SeqState>();
  private readonly pending = new Map<string, EventToAppend[]>();
  private pendingFeed: FeedEventToAppend[] = [];
  private readonly listeners = new Map<string, Set<FrameListener>>();
  private readonly feedListeners = new Set<FrameListener>();
  private flushTimer: NodeJS.Timeout | undefined;
  private flushSoon = false;
  private feedLast: number | undefined;
  /** The store's writes, one after the other. */
  private readonly writes: WriteChain;
  /** Callers of `durable()` waiting for the tick's flush. */
  private flushWaiters: Array<(written: Promise<void> | undefined) => void> = [];
  /** Set once the store answered a read with a promise: reservations are then made ahead of need. */
  private asyncStore = false;

  constructor(
    private readonly store: SessionStore,
    private readonly bus: EventBus,
    private readonly log: Logger,
    private readonly batchMs = 15,
  ) {
    this.writes = new WriteChain(log);
  }

  /** Reads the feed's sequence number (once, at boot: an asynchronous store cannot answer in `publishFeed`). */
  async open(): Promise<void> {
    const seq = this.store.feedSeq();
    if (isPromise(seq)) this.asyncStore = true;
    const value = await seq;
    this.feedLast ??= value;
  }

  /** Loads the session's sequence state, so that `publish` can number its events without asking the store. */
  async load(sessionId: string): Promise<void> {
    const st = this.seqs.get(sessionId);
    if (st) {
      st.used = true;
      return;
    }
    // Writes issued before (a released reservation of this session) land first.
    if (this.writes.tail) await this.writes.tail;
    if (this.seqs.has(sessionId)) return;
    const read = this.store.eventSeqReserved(sessionId);
    if (!isPromise(read)) {
      this.addState(sessionId, read);
      return;
    }
    this.asyncStore = true;
    const stored = await read;
    if (this.seqs.has(sessionId)) return;
    // Reserve a block before the first number is given out: events are shown live before they are stored.
    const reserved = stored + RESERVE_BLOCK;
    await this.store.reserveEventSeq(sessionId, reserved);
    if (!this.seqs.has(sessionId)) this.seqs.set(sessionId, { last: stored, reserved, used: true });
  }

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

  /** Stored events after `afterSeq`; everything published before the call is written first, so nothing is skipped. */
  async replay(sessionId: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
    this.flushSession(sessionId);
    if (this.writes.tail) await this.writes.tail;
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
    const seq = this.feedSeq() + 1;
    this.feedLast = seq;
    const { type, ...rest } = event;
    const json = JSON.stringify({ type, seq, ...rest });
    this.pendingFeed.push({ seq, ts: isoNow(), type: event.type, json });
    this.scheduleSoon();
    for (const fn of this.feedListeners) fn(seq, json);
    return seq;
  }

  feedSeq(): number {
    if (this.feedLast === undefined) {
      const seq = this.store.feedSeq();
      if (isPromise(seq))
        throw new Error("the event log was not opened (SessionEventLog.open) before the feed was used");
      this.feedLast = seq;
    }
    return this.feedLast;
  }

  async replayFeed(afterSeq: number, limit: number): Promise<StoredEvent[]> {
    this.flushFeed();
    if (this.writes.tail) await this.writes.tail;
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

  /**
   * Resolves once every event published so far is stored (a turn's start before its 202, a clean shutdown). The
   * events go out with the tick's own flush rather than at once: a turn's start sends its model request first.
   */
  durable(): Promise<void> {
    if (this.pending.size === 0 && this.pendingFeed.length === 0) return this.writes.tail ?? Promise.resolve();
    this.scheduleSoon();
    return new Promise((resolve) => this.flushWaiters.push(resolve));
  }

  /** Numbers are given as events are published. */
  numbered(): Promise<void> {
    return Promise.resolve();
  }

  /** Writes everything pending and releases unused reservations (clean shutdown keeps seqs contiguous). */
  async close(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.flushAll();
    for (const [id, st] of this.seqs) {
      if (st.reserved > st.last) this.writes.enqueue(() => this.store.reserveEventSeq(id, st.last));
    }
    if (this.writes.tail) await this.writes.tail;
  }

  /** Queues every pending event (all sessions, and the feed) as one write. */
  flushAll(): void {
    if (this.pending.size === 0 && this.pendingFeed.length === 0) return;
    const batch: EventBatch = { sessions: [], feed: this.pendingFeed };
    for (const [sessionId, events] of this.pending) batch.sessions.push({ sessionId, events });
    this.pending.clear();
    this.pendingFeed = [];
    this.writes.enqueue(
      () => this.writeBatch(batch),
      () => this.writeParts(batch),
    );
  }

  /** One write for the whole batch: the store's batch write when it has one, else part by part. */
  private writeBatch(batch: EventBatch): Awaitable<void> {
    const parts = batch.sessions.length + (batch.feed.length > 0 ? 1 : 0);
    if (this.store.appendBatch && parts > 1) return this.store.appendBatch(batch);
    return this.writeParts(batch);
  }

  /** Part by part, each failure logged on its own: one session's failing rows (deleted meanwhile?) lose no others. */
  private writeParts(batch: EventBatch): Awaitable<void> {
    const steps: Step[] = batch.sessions.map(({ sessionId, events }) => [
      () => this.store.appendEvents(sessionId, events),
      (err) => this.log.error({ err, sessionId, count: events.length }, "could not persist session events"),
    ]);
    for (const e of batch.feed) {
      steps.push([
        () => this.store.appendFeed(e),
        (err) => this.log.error({ err, seq: e.seq }, "could not persist a feed event"),
      ]);
    }
    return runSteps(steps, 0);
  }

  private flushFeed(): void {
    if (this.pendingFeed.length === 0) return;
    const batch: EventBatch = { sessions: [], feed: this.pendingFeed };
    this.pendingFeed = [];
    this.writes.enqueue(() => this.writeParts(batch));
  }

  private flushSession(sessionId: string): void {
    const events = this.pending.get(sessionId);
    if (!events || events.length === 0) return;
    this.pending.delete(sessionId);
    this.writes.enqueue(() => this.writeParts({ sessions: [{ sessionId, events }], feed: [] }));
  }

  /** Durable events: written once the current synchronous run (and its microtasks) is over. */
  private scheduleSoon(): void {
    if (this.flushSoon) return;
    this.flushSoon = true;
    process.nextTick(() => {
      this.flushSoon = false;
      this.flushAll();
      const written = this.writes.tail;
      for (const resolve of this.flushWaiters.splice(0)) resolve(written);
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
    const st = this.seqs.get(sessionId);
    if (st) return st;
    const reserved = this.store.eventSeqReserved(sessionId);
    if (isPromise(reserved)) {
      reserved.catch(noop);
      throw new Error(`session ${sessionId}: its event log was not loaded (SessionService.require or find loads it)`);
    }
    return this.addState(sessionId, reserved);
  }

  private addState(sessionId: string, reserved: number): SeqState {
    if (this.seqs.size >= MAX_SEQ_STATES) this.evictSeqStates();
    const st = { last: reserved, reserved, used: true };
    this.seqs.set(sessionId, st);
    return st;
  }

  /**
   * Bounds the per-session memory (a daemon that has touched 100,000 sessions keeps 2,000 of them): the oldest
   * half without pending events, subscribers or events since the last pass is dropped, its unused reservation
   * released first, so the next event continues exactly where it stopped.
   */
  private evictSeqStates(): void {
    evictUntouched(
      this.seqs,
      Math.floor(MAX_SEQ_STATES / 2),
      (id) => this.pending.has(id) || this.listeners.has(id),
      (id, st) => {
        if (st.reserved > st.last) this.writes.enqueue(() => this.store.reserveEventSeq(id, st.last));
      },
    );
  }

  private nextSeq(sessionId: string): number {
    const st = this.state(sessionId);
    st.last++;
    st.used = true;
    if (st.last > st.reserved - (this.asyncStore ? RESERVE_AHEAD : 0)) {
      st.reserved = Math.max(st.reserved, st.last) + RESERVE_BLOCK - (this.asyncStore ? 0 : 1);
      const upTo = st.reserved;
      this.writes.enqueue(() => this.store.reserveEventSeq(sessionId, upTo));
    }
    return st.last;
  }
}

function noop(): void {}
