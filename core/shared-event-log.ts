import type { Disposable } from "./disposable.js";
import { ApiError } from "./errors.js";
import { Channel } from "./event-channel.js";
import { evictUntouched, isoNow } from "./event-log-common.js";
import type { EventLog, FrameListener } from "./event-log-types.js";
import type { EventBus, SessionEvent } from "./events.js";
import type { Logger } from "./logger.js";
import {
  boundWaiting,
  MAX_WAITING,
  type Outgoing,
  outgoingFeedEvent,
  outgoingSessionEvent,
} from "./outgoing-events.js";
import type { StoredEvent } from "./session-types.js";
import type { EventListener, EventRing, SessionStore, SharedEvents } from "./store.js";

/** Sessions followed in memory; idle ones beyond this are dropped (the next `load` reads their position again). */
const MAX_CHANNELS = 2000;
/** Writes that found the database away are tried again after this long, doubling up to the maximum. */
const RETRY_WRITE_MS = 100;
const MAX_RETRY_WRITE_MS = 2000;
/** Events per appending statement (a slice of what one session queued while the last write was out). */
const MAX_APPEND = 1000;

/**
 * The event log of a daemon in a team: several daemons on one database (a store with `sharedEvents`). Nothing is
 * numbered in memory: the store numbers each batch in its appending transaction, under the session's row lock, and
 * rings a doorbell after the commit. This daemon's subscribers get its own events once they are stored (the frames
 * it appended, without reading them back) and every other daemon's by reading the rows the doorbell announces, so
 * a client of any daemon sees the same frames, numbers and order. Rings only say how far to read: a lost or
 * coalesced one is made up by the next, and after the listener was away every followed log is read again.
 *
 * Writes go out one at a time: what is published while one is in flight goes out, all together, right after it
 * (one round trip per batch however fast deltas come, in slices of at most MAX_APPEND events).
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
    let queue = this.pending.get(sessionId);
    if (!queue) {
      queue = [];
      this.pending.set(sessionId, queue);
    }
    queue.push(outgoingSessionEvent(sessionId, event));
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
    this.pendingFeed.push(outgoingFeedEvent(event));
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
   * One session's (or the feed's) pending events, appended in slices of at most MAX_APPEND: the connection runs one
   * statement at a time, and a read made meanwhile (a client's replay, a session's load) waits for one slice, never
   * for everything a fast stream queued while the last write was out. Each slice is handed out (and put on the bus)
   * once stored. Never rejects: resolves to true when the database was unavailable and the slice and those after it
   * were put back at the head of the queue, to be written again.
   */
  private async append(sessionId: string | null, events: Outgoing[]): Promise<boolean> {
    for (let i = 0; i < events.length; i += MAX_APPEND) {
      if (await this.appendSlice(sessionId, events.slice(i, i + MAX_APPEND))) {
        this.requeue(sessionId, events.slice(i));
        return true;
      }
    }
    return false;
  }

  /** Appends one slice and hands it out; true when the database was unavailable (the caller puts it back). */
  private async appendSlice(sessionId: string | null, events: Outgoing[]): Promise<boolean> {
    const ch = sessionId === null ? this.feed : this.channel(sessionId);
    ch.inflight++;
    let first: number | undefined;
    let again = false;
    try {
      first = await this.shared.append(sessionId, events);
    } catch (err) {
      again = err instanceof ApiError && err.status === 503 && !this.closing;
      if (!again) this.log.error({ err, sessionId, count: events.length }, "could not persist events");
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
    const queue = [...events, ...(this.pending.get(sessionId) ?? [])];
    const kept = boundWaiting(queue);
    if (queue.length > MAX_WAITING) {
      this.log.warn(
        { sessionId, dropped: queue.length - kept.length },
        "the database is away: the oldest streaming deltas waiting to be stored were dropped",
      );
    }
    this.pending.set(sessionId, kept);
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
