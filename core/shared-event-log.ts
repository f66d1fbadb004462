import { type Disposable, toDisposable } from "./disposable.js";
import { ApiError } from "./errors.js";
import { EPHEMERAL_TYPES, evictUntouched, isoNow } from "./event-log.js";
import type { EventLog, FrameListener } from "./event-log-types.js";
import type { EventBus, SessionEvent } from "./events.js";
import type { Logger } from "./logger.js";
import type { StoredEvent } from "./session-types.js";
import type { EventListener, EventRing, SessionStore, SharedEvents, UnnumberedEvent } from "./store.js";

/** Reads of events another daemon appended go in pages of this many. */
const READ_PAGE = 500;
/** Sessions followed in memory; idle ones beyond this are dropped (the next `load` reads their position again). */
const MAX_CHANNELS = 2000;
/** A read that failed (the database is away) is tried again after this long. */
const RETRY_READ_MS = 250;
/** Writes that found the database away are tried again after this long, doubling up to the maximum. */
const RETRY_WRITE_MS = 100;
const MAX_RETRY_WRITE_MS = 2000;
/** Events of one session that wait for the database at most; beyond, the oldest deltas are dropped. */
const MAX_WAITING = 5000;

/** An event of this daemon waiting for its number, with its wire object (for the in-process bus). */
interface Outgoing extends UnnumberedEvent {
  wire: Record<string, unknown>;
}

/**
 * One numbered log as this daemon follows it (a session's, or the feed): what is known to be stored, what the local
 * subscribers were given, and the frames this daemon appended itself (handed out without reading them back).
 * Subscribers get every number once, in order: from those frames while they follow on, else read from the store.
 */
class Channel {
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

/**
 * The event log of a daemon in a team: several daemons on one database (a store with `sharedEvents`). Nothing is
 * numbered in memory: the store numbers each batch in its appending transaction, under the session's row lock, and
 * rings a doorbell after the commit. This daemon's subscribers get its own events once they are stored (the frames
 * it appended, without reading them back) and every other daemon's by reading the rows the doorbell announces, so
 * a client of any daemon sees the same frames, numbers and order. Rings only say how far to read: a lost or
 * coalesced one is made up by the next, and after the listener was away every followed log is read again.
 *
 * Writes go out one at a time: what is published while one is in flight goes out, all together, right after it
 * (one round trip per batch however fast deltas come).
 */
export class SharedEventLog implements EventLog {
  private readonly channels = new Map<string, Channel>();
  private readonly feed: Channel;
  private pending = new Map<string, Outgoing[]>();
  private pendingFeed: Outgoing[] = [];
  private writing: Promise<void> | undefined;
  private scheduled = false;
  private published = 0;
  private stored = 0;
  private waiters: Array<{ upTo: number; resolve: () => void }> = [];
  private listener: EventListener | undefined;
  /** Set while the database is away: the next attempt to write. */
  private retry: NodeJS.Timeout | undefined;
  private retryMs = 0;
  private closing = false;

  constructor(
    private readonly store: SessionStore,
    private readonly shared: SharedEvents,
    private readonly bus: EventBus,
    private readonly log: Logger,
  ) {
    this.feed = new Channel(
      async (after, limit) => this.store.readFeed(after, limit),
      (err) => this.log.warn({ err }, "could not read the feed's new events; trying again"),
    );
  }

  /** Listens first, then reads the feed's position: nothing appended in between is missed. */
  async open(): Promise<void> {
    this.listener = this.shared.listen((r) => this.ring(r));
    await this.listener.ready;
    this.feed.advance(await this.store.feedSeq());
  }

  async load(sessionId: string): Promise<void> {
    let ch = this.channels.get(sessionId);
    if (ch) {
      ch.used = true;
      if (ch.loading) return ch.loading;
      if (!ch.stale) return;
    } else {
      ch = this.addChannel(sessionId);
    }
    const loaded = ch;
    loaded.loading = (async () => {
      try {
        loaded.advance(await this.store.eventSeqReserved(sessionId));
        loaded.stale = false;
      } catch (err) {
        loaded.stale = true;
        throw err;
      } finally {
        loaded.loading = undefined;
      }
    })();
    return loaded.loading;
  }

  publish(sessionId: string, event: SessionEvent): void {
    const wire: Record<string, unknown> = { type: event.type, sessionId, seq: 0 };
    const rest: Record<string, unknown> = {};
    for (const key in event) {
      if (key === "type" || key === "seq" || key === "sessionId") continue;
      const value = (event as Record<string, unknown>)[key];
      wire[key] = value;
      rest[key] = value;
    }
    const head = `{"type":${JSON.stringify(event.type)},"sessionId":${JSON.stringify(sessionId)},"seq":`;
    let queue = this.pending.get(sessionId);
    if (!queue) {
      queue = [];
      this.pending.set(sessionId, queue);
    }
    queue.push({
      ts: isoNow(),
      type: event.type,
      head,
      tail: tailOf(rest),
      ephemeral: EPHEMERAL_TYPES.has(event.type),
      wire,
    });
    this.published++;
    this.schedule();
  }

  currentSeq(sessionId: string): number {
    const ch = this.channels.get(sessionId);
    if (!ch)
      throw new Error(`session ${sessionId}: its event log was not loaded (SessionService.require or find loads it)`);
    return ch.known;
  }

  async replay(sessionId: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
    return this.store.readEvents(sessionId, afterSeq, limit);
  }

  subscribe(sessionId: string, fn: FrameListener): Disposable {
    return this.channel(sessionId).subscribe(fn);
  }

  publishFeed(event: SessionEvent & { sessionId: string }): void {
    const { type, ...rest } = event;
    const { seq: _seq, ...payload } = rest as Record<string, unknown>;
    const wire = { type, seq: 0, ...payload };
    this.pendingFeed.push({
      ts: isoNow(),
      type,
      head: `{"type":${JSON.stringify(type)},"seq":`,
      tail: tailOf(payload),
      ephemeral: false,
      wire,
    });
    this.published++;
    this.schedule();
  }

  feedSeq(): number {
    return this.feed.known;
  }

  async replayFeed(afterSeq: number, limit: number): Promise<StoredEvent[]> {
    return this.store.readFeed(afterSeq, limit);
  }

  subscribeFeed(fn: FrameListener): Disposable {
    return this.feed.subscribe(fn);
  }

  forget(sessionId: string): void {
    this.pending.delete(sessionId);
    this.channels.get(sessionId)?.stop();
    this.channels.delete(sessionId);
  }

  /** Like SessionEventLog's: the events go out with the tick's write, and this resolves once they are stored. */
  durable(): Promise<void> {
    if (this.stored >= this.published) return Promise.resolve();
    this.schedule();
    const upTo = this.published;
    return new Promise((resolve) => this.waiters.push({ upTo, resolve }));
  }

  /** Numbers are given as events are stored. */
  numbered(): Promise<void> {
    return this.durable();
  }

  /** Writes what is pending (once more if the database is away, then it is given up, logged). */
  async close(): Promise<void> {
    this.closing = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    while (this.writing || this.pending.size > 0 || this.pendingFeed.length > 0) {
      this.write();
      await this.writing;
    }
    for (const ch of this.channels.values()) ch.stop();
    this.feed.stop();
    await this.listener?.close();
  }

  private ring(r: EventRing): void {
    if (r.kind === "session") this.channels.get(r.sessionId)?.advance(r.lastSeq);
    else if (r.kind === "feed") this.feed.advance(r.lastSeq);
    else this.reread();
  }

  /** The doorbell was away: the followed logs are read again (the others on their next `load`). */
  private reread(): void {
    const failed = (err: unknown) => this.log.warn({ err }, "could not read the event positions after reconnecting");
    Promise.resolve(this.store.feedSeq()).then((seq) => this.feed.advance(seq), failed);
    for (const [id, ch] of this.channels) {
      if (ch.listeners.size === 0) {
        ch.stale = true;
        continue;
      }
      Promise.resolve(this.store.eventSeqReserved(id)).then((seq) => ch.advance(seq), failed);
    }
  }

  private schedule(): void {
    if (this.scheduled || this.writing || this.retry) return;
    this.scheduled = true;
    process.nextTick(() => {
      this.scheduled = false;
      this.write();
    });
  }

  /** Writes everything pending (one append per session, one for the feed); then what came meanwhile. */
  private write(): void {
    if (this.writing || this.retry || (this.pending.size === 0 && this.pendingFeed.length === 0)) return;
    const sessions = this.pending;
    const feed = this.pendingFeed;
    this.pending = new Map();
    this.pendingFeed = [];
    const upTo = this.published;
    const parts = [...sessions].map(([id, events]) => this.append(id, events));
    if (feed.length > 0) parts.push(this.append(null, feed));
    this.writing = Promise.all(parts).then((again) => {
      this.writing = undefined;
      // Waiters are answered after each attempt (a write that failed is logged, as SessionEventLog does).
      this.stored = upTo;
      const ready = this.waiters.filter((w) => w.upTo <= upTo);
      this.waiters = this.waiters.filter((w) => w.upTo > upTo);
      for (const w of ready) w.resolve();
      if (!again.includes(true) || this.closing) {
        this.retryMs = 0;
        this.write();
        return;
      }
      // The database is away: the events wait, in order, and go out once it answers again.
      this.retryMs = Math.min(Math.max(2 * this.retryMs, RETRY_WRITE_MS), MAX_RETRY_WRITE_MS);
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.write();
      }, this.retryMs);
      this.retry.unref?.();
    });
  }

  /**
   * One append; its events are handed out (and put on the bus) once stored. Never rejects: resolves to true when the
   * database was unavailable and the events were put back at the head of the queue, to be written again.
   */
  private async append(sessionId: string | null, events: Outgoing[]): Promise<boolean> {
    const ch = sessionId === null ? this.feed : this.channel(sessionId);
    ch.inflight++;
    let first: number | undefined;
    let again = false;
    try {
      first = await this.shared.append(sessionId, events);
    } catch (err) {
      again = err instanceof ApiError && err.status === 503 && !this.closing;
      if (again) this.requeue(sessionId, events);
      else this.log.error({ err, sessionId, count: events.length }, "could not persist events");
    } finally {
      ch.inflight--;
    }
    const current = sessionId === null ? this.feed : this.channels.get(sessionId);
    if (first === undefined || current !== ch) {
      ch.pump();
      return again;
    }
    const jsons = events.map((e, i) => e.head + (first + i) + e.tail);
    ch.appended(first, jsons);
    if (sessionId === null) return false;
    for (let i = 0; i < events.length; i++) {
      const e = events[i] as Outgoing;
      e.wire.seq = first + i;
      this.bus.emit({ type: "session.event", sessionId, seq: first + i, event: e.wire as SessionEvent });
    }
    return false;
  }

  /** Puts events that could not be written back before those published since. */
  private requeue(sessionId: string | null, events: Outgoing[]): void {
    if (sessionId === null) {
      this.pendingFeed = [...events, ...this.pendingFeed];
      return;
    }
    let queue = [...events, ...(this.pending.get(sessionId) ?? [])];
    if (queue.length > MAX_WAITING) {
      // A long outage must not hold a turn's every delta in memory: the oldest deltas (tokens, thinking) go first;
      // the messages they add up to are not deltas, and are kept.
      let drop = queue.length - MAX_WAITING;
      const before = queue.length;
      queue = queue.filter((e) => !(e.ephemeral && drop-- > 0));
      this.log.warn(
        { sessionId, dropped: before - queue.length },
        "the database is away: the oldest streaming deltas waiting to be stored were dropped",
      );
    }
    this.pending.set(sessionId, queue);
  }

  /**
   * A session's events after `after`. When numbers up to `upTo` were announced but nothing is stored, the session
   * was deleted meanwhile (its rows went with it, before this daemon read them): its subscribers get the frame its
   * own daemon's got, the closing one, so that they end too.
   */
  private async readSession(sessionId: string, after: number, limit: number, upTo: number): Promise<StoredEvent[]> {
    const rows = await this.store.readEvents(sessionId, after, limit);
    if (rows.length > 0 || upTo <= after || (await this.store.getSession(sessionId))) return rows;
    const json = `{"type":"session_closed","sessionId":${JSON.stringify(sessionId)},"seq":${upTo},"deleted":true}`;
    return [{ seq: upTo, ts: isoNow(), type: "session_closed", json }];
  }

  private channel(sessionId: string): Channel {
    const ch = this.channels.get(sessionId);
    if (ch) {
      ch.used = true;
      return ch;
    }
    // Not loaded: its position comes with its first append or ring, and the next `load` reads it.
    const added = this.addChannel(sessionId);
    added.stale = true;
    return added;
  }

  private addChannel(sessionId: string): Channel {
    if (this.channels.size >= MAX_CHANNELS) this.evict();
    const ch = new Channel(
      (after, limit, upTo) => this.readSession(sessionId, after, limit, upTo),
      (err) => this.log.warn({ err, sessionId }, "could not read the session's new events; trying again"),
    );
    this.channels.set(sessionId, ch);
    return ch;
  }

  /** The oldest half of the idle channels untouched since the last pass goes (their position is read again). */
  private evict(): void {
    evictUntouched(
      this.channels,
      Math.floor(MAX_CHANNELS / 2),
      (id, ch) => !ch.idle || this.pending.has(id),
      (_id, ch) => ch.stop(),
    );
  }
}

/** The JSON of the payload after the sequence number: `,"k":v...}` (or `}` when there is none). */
function tailOf(payload: Record<string, unknown>): string {
  const body = JSON.stringify(payload);
  return body === "{}" ? "}" : `,${body.slice(1)}`;
}
