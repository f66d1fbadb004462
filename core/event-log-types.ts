import type { Disposable } from "./disposable.js";
import type { SessionEvent } from "./events.js";
import type { StoredEvent } from "./session-types.js";

/** A live frame: its sequence number and its JSON. */
export type FrameListener = (seq: number, json: string) => void;

/**
 * What the daemon asks of its event log: the per-session streams (numbered, stored, fanned out to subscribers in
 * order) and the all-sessions feed. `SessionEventLog` numbers in memory (one daemon on its own store);
 * `SharedEventLog` lets a database several daemons share number them, and follows every daemon's appends.
 */
export interface EventLog {
  /** Before anything is published: reads the feed's position (and starts following other daemons). */
  open(): Promise<void>;
  /** Loads the session's position, so that `currentSeq` answers without asking the store. */
  load(sessionId: string): Promise<void>;
  /** Appends an event to the session's log; subscribers get it in order. */
  publish(sessionId: string, event: SessionEvent): void;
  /** The last sequence number of the session's log this daemon knows of (0 when none). */
  currentSeq(sessionId: string): number;
  /** Stored events after `afterSeq`, at most `limit`; everything `currentSeq` counted is among them. */
  replay(sessionId: string, afterSeq: number, limit: number): Promise<StoredEvent[]>;
  subscribe(sessionId: string, fn: FrameListener): Disposable;
  publishFeed(event: SessionEvent & { sessionId: string }): void;
  feedSeq(): number;
  replayFeed(afterSeq: number, limit: number): Promise<StoredEvent[]>;
  subscribeFeed(fn: FrameListener): Disposable;
  /** Drops in-memory state of a deleted session. */
  forget(sessionId: string): void;
  /** Resolves once every event published so far is stored. */
  durable(): Promise<void>;
  /**
   * Resolves once every event published so far has its number, so `currentSeq` and `feedSeq` count it: a stream's
   * first frame is taken after it, so what a client's earlier request published comes before that frame.
   */
  numbered(): Promise<void>;
  /** Writes everything pending and stops. */
  close(): Promise<void>;
}
