import type { DocumentStore } from "./documents.js";
import type { NewMessage, SessionRecord, StoredEvent, StoredMessage } from "./session-types.js";
import { createToken } from "./tokens.js";

export interface ListQuery {
  q?: string;
  limit?: number;
  offset?: number;
}

/** The session fields a listing shows: no usage, meta or share token (the JSON columns stay unparsed). */
export type SessionListEntry = Pick<
  SessionRecord,
  | "id"
  | "title"
  | "pinned"
  | "persona"
  | "model"
  | "cwd"
  | "mode"
  | "isSandbox"
  | "messageCount"
  | "createdAt"
  | "updatedAt"
>;

/** A session and its working directory. */
export interface SessionDirectory {
  id: string;
  cwd: string;
}

export interface HistoryPage {
  messages: StoredMessage[];
  /** seq of the first message in the page, null when empty. */
  oldestSeq: number | null;
  hasMoreHistory: boolean;
}

export interface MessageHit {
  sessionId: string;
  sessionTitle: string | null;
  seq: number;
  role: string;
  /** A short excerpt around the match. */
  snippet: string;
  createdAt: string;
}

export interface EventToAppend {
  seq: number;
  ts: string;
  type: string;
  json: string;
  /** Deltas (token, thinking) are replayable but not part of the audit trail. */
  ephemeral: boolean;
}

/** A value, or a promise of it: what every store method returns. */
export type Awaitable<T> = T | Promise<T>;

/** A feed event as stored (the all-sessions stream). */
export interface FeedEventToAppend {
  seq: number;
  ts: string;
  type: string;
  json: string;
}

/** One write of the event log: the pending events of several sessions and of the feed, written together. */
export interface EventBatch {
  sessions: Array<{ sessionId: string; events: EventToAppend[] }>;
  feed: FeedEventToAppend[];
}

/**
 * Persistence for sessions, their append-only message history and their event log.
 *
 * Every method may answer synchronously or with a promise ({@link Awaitable}); callers always `await` it, and no
 * caller assumes a write has completed before its promise settles. The built-in store (SQLite through
 * better-sqlite3) answers synchronously, which keeps its path as fast as a direct call; a network database (a
 * PostgreSQL storage plugin) answers with promises. What a store must guarantee: calls made one after the other on
 * one store take effect in that order (a read sees every write issued before it), and a settled write is durable.
 */
export interface SessionStore {
  createSession(rec: SessionRecord): Awaitable<void>;
  getSession(id: string): Awaitable<SessionRecord | undefined>;
  /** Applies a partial update and bumps `updatedAt` unless given. Returns the new record, or undefined. */
  updateSession(
    id: string,
    patch: Partial<Omit<SessionRecord, "id" | "createdAt">>,
  ): Awaitable<SessionRecord | undefined>;
  /** Deletes the session with its messages and events. */
  deleteSession(id: string): Awaitable<boolean>;
  listSessions(query: ListQuery): Awaitable<{ sessions: SessionRecord[]; total: number }>;
  /**
   * Optional: `listSessions` with only the listing's fields (GET /sessions); the service falls back to listSessions.
   * A frozen entry (or array) may be shared between calls and never changes: a write gives the session a new entry,
   * so what the service derives from a frozen entry (its summary's text) it may keep with it.
   */
  listEntries?(query: ListQuery): Awaitable<{ sessions: SessionListEntry[]; total: number }>;
  findByShareToken(token: string): Awaitable<SessionRecord | undefined>;
  /**
   * Optional (the three directory queries answer from an index on the sessions' directories, never a read of every
   * session; without them the service reads the listing once per question): the sessions working in `dir` (with
   * `below`, also in the directories under it), ordered by directory then id, after `after` (the last one of the
   * previous page), at most `limit`.
   */
  sessionsInDirectory?(
    dir: string,
    opts: { below: boolean; after?: SessionDirectory; limit: number },
  ): Awaitable<SessionDirectory[]>;
  /** Optional: those of `dirs` that are some session's working directory. */
  usedDirectories?(dirs: string[]): Awaitable<string[]>;
  /** Optional: the distinct working directories of all sessions in order, after `after` (all when ""), at most `limit`. */
  distinctDirectories?(after: string, limit: number): Awaitable<string[]>;

  /** Appends one message, assigning the next per-session seq; also bumps the session's updatedAt/messageCount. */
  appendMessage(sessionId: string, msg: NewMessage): Awaitable<StoredMessage>;
  /** Optional: appends several messages as one write (imports, forks); the caller falls back to appendMessage. */
  appendMessages?(sessionId: string, msgs: NewMessage[]): Awaitable<void>;
  /** The most recent `turns` user turns (a page starts at a user message), before `beforeSeq` when given. */
  historyPage(sessionId: string, turns: number, beforeSeq?: number): Awaitable<HistoryPage>;
  /** Optional: messages with seq > afterSeq in order, at most `limit` (whole-history readers page with it). */
  readMessages?(sessionId: string, afterSeq: number, limit: number): Awaitable<StoredMessage[]>;
  /** Messages currently in the model's context, in order. */
  contextMessages(sessionId: string): Awaitable<StoredMessage[]>;
  /** Marks messages up to and including `seq` as out of context (all when seq is undefined). */
  markOutOfContext(sessionId: string, uptoSeq?: number): Awaitable<void>;
  /** Deletes messages with seq >= fromSeq (undo). */
  truncateMessages(sessionId: string, fromSeq: number): Awaitable<void>;
  hasClientMessageId(sessionId: string, clientMessageId: string): Awaitable<boolean>;
  /** Full-text search over message text of all sessions (or one), newest first. */
  searchMessages(
    query: string,
    opts?: { sessionId?: string; excludeSessionId?: string; limit?: number },
  ): Awaitable<MessageHit[]>;

  appendEvents(sessionId: string, events: EventToAppend[]): Awaitable<void>;
  /** Events with seq > afterSeq in order, at most `limit`. */
  readEvents(
    sessionId: string,
    afterSeq: number,
    limit: number,
    opts?: { durableOnly?: boolean },
  ): Awaitable<StoredEvent[]>;
  /** The high-water mark of reserved event sequence numbers (see SessionEventLog). */
  eventSeqReserved(sessionId: string): Awaitable<number>;
  reserveEventSeq(sessionId: string, upTo: number): Awaitable<void>;

  /** The all-sessions feed (lifecycle events), with its own global sequence. */
  appendFeed(event: FeedEventToAppend): Awaitable<void>;
  readFeed(afterSeq: number, limit: number): Awaitable<StoredEvent[]>;
  feedSeq(): Awaitable<number>;

  /**
   * Optional: writes a batch of events (several sessions and the feed) as one transaction. The event log writes
   * the pending events of all sessions through it, one commit per flush instead of one per session. When it
   * fails, the log writes the batch's parts one at a time, so one failing session does not lose the others'.
   */
  appendBatch?(batch: EventBatch): Awaitable<void>;

  /**
   * Optional: the event log of a database several daemons share. When a store has it, the daemon's event log does
   * not number events itself: each batch is numbered by the store in its appending transaction, and every daemon
   * learns of the others' events through the doorbell and reads them (see SharedEventLog). Without it (SQLite, one
   * daemon), the log numbers events in memory and writes them with `appendEvents`/`appendBatch`.
   */
  sharedEvents?: SharedEvents;

  /**
   * Optional: the daemon's documents (settings, approval rules, trust decisions) kept in this store, for a
   * database several daemons share. Without it they are files in the daemon's home.
   */
  documents?: DocumentStore;

  /**
   * Optional: who runs a session's turn when several daemons share the store (see {@link TurnOwnership}). Without
   * it (SQLite, one daemon) every turn runs where it was started and nothing is leased.
   */
  turnOwnership?: TurnOwnership;

  /** Optional: what the store is and whether it is reachable (`/server/status`). */
  status?(): StoreStatus;

  close(): Awaitable<void>;
}

/** What `/server/status` shows of the store's database. */
export interface StoreStatus {
  /** e.g. "sqlite", "postgres". */
  kind: string;
  /** Where it is, any password replaced by `***`. */
  url?: string;
  /** Whether the last use of the connection succeeded. */
  connected: boolean;
}

/**
 * An event the store numbers as it appends it: its frame is `head + seq + tail` (the JSON of the event with its
 * sequence number in the middle), so the number can be given inside the appending statement.
 */
export interface UnnumberedEvent {
  ts: string;
  type: string;
  head: string;
  tail: string;
  /** Deltas (token, thinking) are replayable but not part of the audit trail. */
  ephemeral: boolean;
}

/** What the doorbell says: a log has events up to `lastSeq`, or the listener was away (anything may be missed). */
export type EventRing =
  | { kind: "session"; sessionId: string; lastSeq: number }
  | { kind: "feed"; lastSeq: number }
  | { kind: "reconnected" };

/** The listening side of the doorbell: `ready` once it listens; `close` stops it. */
export interface EventListener {
  ready: Promise<void>;
  close(): Promise<void>;
}

/** A store's event log shared by several daemons (see {@link SessionStore.sharedEvents}). */
export interface SharedEvents {
  /**
   * Appends events to a session's log (or to the feed, `sessionId` null) and numbers them densely after the last
   * number given, under the session's (the feed's) row lock, in the appending transaction; after the commit it
   * rings the doorbell with the log's last number. Resolves to the first number given, or undefined when the
   * session does not exist (deleted meanwhile) or the events belong to a turn whose lease this daemon lost (see
   * {@link TurnOwnership}: they are refused).
   */
  append(sessionId: string | null, events: UnnumberedEvent[]): Promise<number | undefined>;
  /**
   * Listens to the doorbell of every daemon's appends. A ring is a hint, never the data: rings may be coalesced or
   * lost, and after a connection was lost `reconnected` says that any may have been; the reader reads the rows.
   */
  listen(ring: (r: EventRing) => void): EventListener;
}

/** The outcome of asking for a session's turn lease. */
export type LeaseClaim =
  | { ok: true; fence: number }
  /** Another daemon holds it; `expired` when its lease ran out (the owner is gone: a takeover is due). */
  | { ok: false; owner: string; expired: boolean };

/** A turn whose owner is gone, its lease now held by this daemon (`fence`) until the turn is ended and released. */
export interface OrphanedTurn {
  sessionId: string;
  /** The daemon that ran it. */
  owner: string;
  /** The session's last event number when the turn started: an `end` after it means the turn did end. */
  afterSeq: number;
}

/** Turn control posted to a daemon that does not own the turn, for the owner to carry out. */
export interface TurnCommand {
  sessionId: string;
  kind: string;
  payload: unknown;
}

/** The owner's answer to a command: the HTTP status and body it would have answered itself. */
export interface TurnCommandResult {
  status: number;
  body: unknown;
}

/** A live daemon of the team (its heartbeat is younger than the lease timeout). */
export interface TeamDaemon {
  id: string;
  host: string;
  version: string;
  lastHeartbeat: string;
}

/** What this daemon does for the team: the owner's side of leases and commands. */
export interface OwnershipHandlers {
  /** This daemon lost the lease of a turn it runs (it could not renew it in time, or it was taken over): stop it. */
  lost(sessionId: string): void;
  /** A gone daemon's turn, now leased to this daemon: end it, then {@link TurnOwnership.release} it. */
  orphaned(turn: OrphanedTurn): Promise<void>;
  /** A command for this daemon, taken from the queue once: carry it out. */
  command(cmd: TurnCommand): Promise<TurnCommandResult>;
}

/**
 * One owner per running turn in a team of daemons on one database. The owner holds a lease row with a fencing
 * counter and renews it while the turn runs; the store refuses the turn's writes (messages, events) from a daemon
 * whose fence is stale. Control posted elsewhere reaches the owner through {@link send}. A lease that is not renewed
 * within `leaseTimeoutMs` (the owner died or lost the database) is taken over by another daemon, which ends the turn.
 */
export interface TurnOwnership {
  /** This daemon's id in the team. */
  readonly daemonId: string;
  readonly leaseTimeoutMs: number;
  /** Starts taking commands and orphaned turns (called once, by whoever runs turns). */
  serve(handlers: OwnershipHandlers): void;
  /** Takes the session's turn lease for this daemon (already held: the same fence). */
  claim(sessionId: string): Promise<LeaseClaim>;
  /**
   * The daemon whose live (not expired) lease names the session's running turn, read from the database. With
   * `orLast`, when no turn runs: the live daemon that ran the last one (it knows that turn's answered decisions).
   */
  leaseOwner(sessionId: string, orLast?: boolean): Promise<string | undefined>;
  /**
   * A daemon known to be dead (this home's previous daemon, which crashed): its leases run out now, so its turns are
   * taken over at once, and it leaves the team.
   */
  forget(daemonId: string): Promise<void>;
  /** Takes over (and has ended) now, not at the next heartbeat, the leases whose owners stopped renewing them. */
  sweep(): Promise<void>;
  /** Lets go of the lease (after the turn's `end` is stored); no-op when not held. */
  release(sessionId: string): Promise<void>;
  /** Whether this daemon holds the session's lease. */
  holds(sessionId: string): boolean;
  /** From memory: the daemon and start (epoch ms) of another daemon's live lease of the session, if any. */
  remote(sessionId: string): { owner: string; startedAt: number } | undefined;
  /** From memory: sessions whose turn runs on another daemon. */
  remoteRunning(): string[];
  /**
   * Posts a command to the daemon `owner` and resolves with its result once the owner has taken and answered it.
   * `key` makes a retry the same command. Rejects with a 503 when the owner does not take it in time.
   */
  send(owner: string, cmd: TurnCommand, key?: string): Promise<TurnCommandResult>;
  /** From memory (refreshed by the heartbeat): the team's live daemons. */
  daemons(): TeamDaemon[];
}

export const SessionStoreToken = createToken<SessionStore>("session-store");
