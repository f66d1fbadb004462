import type { PoolClient } from "pg";
import {
  ApiError,
  type EventBatch,
  type EventToAppend,
  type FeedEventToAppend,
  type HistoryPage,
  type ListQuery,
  type MessageHit,
  type NewMessage,
  type SessionDirectory,
  type SessionListEntry,
  type SessionRecord,
  type SessionStore,
  type StoredEvent,
  type StoredMessage,
} from "../../core/index.js";
import { causeOf, checkUrl, connectionBroken, loadPg, redactUrl, SerialConnection } from "./connection.js";
import { PgDocuments } from "./documents.js";
import { Doorbell } from "./doorbell.js";
import { PgEvents } from "./events.js";
import { PgMessages } from "./messages.js";
import { migratePg } from "./migrations.js";
import { PgTurnOwnership } from "./ownership.js";
import { PgSessions, type SessionPatch } from "./sessions.js";
import { PgSharedEvents } from "./shared-events.js";
import { type Runner, text } from "./sql.js";

export interface PgStoreOptions {
  /** The connection URL, or a promise of it (the test harness creates a database first). */
  url: string | Promise<string>;
  /** A connection that failed while idle (logged; the next call reconnects). */
  onIdleError?: (err: Error) => void;
  /** The listening connection was lost or could not listen again (logged; it keeps trying). */
  onListenError?: (err: Error) => void;
  /** false: the daemon's documents stay files in its home (the test harness's per-daemon databases). */
  documents?: boolean;
  /** This daemon's id in the team (default: a new random one). */
  daemonId?: string;
  /** This daemon's version, shown to the team. */
  version?: string;
  /** How long a turn's lease lasts without renewal before another daemon takes the turn over (default 15 s). */
  leaseTimeoutMs?: number;
  /** The team's background work failed (logged; it is tried again). */
  onTeamError?: (err: Error, what: string) => void;
}

/** What `/server/status` shows of the database. */
export interface PgStoreStatus {
  kind: "postgres";
  url: string;
  connected: boolean;
}

/**
 * The SessionStore on PostgreSQL (node-postgres). Opening (connecting, migrating) starts at construction and every
 * call waits for it; when it fails, every call fails with the same one-line reason naming the redacted URL. Calls
 * run one at a time on one connection, in the order they were made. Nothing is cached in memory: other daemons
 * may write the same database.
 */
export class PostgresSessionStore implements SessionStore {
  private readonly ready: Promise<SerialConnection>;
  private readonly teamConn: Promise<SerialConnection>;
  private conn: SerialConnection | undefined;
  private redacted = "postgres://";
  private closed = false;
  private lastOk = false;

  /** Events are numbered by the database and announced to every daemon (LISTEN/NOTIFY). */
  readonly sharedEvents: PgSharedEvents;
  /** The daemon's settings, approval rules and trust decisions, shared by every daemon on the database. */
  readonly documents: PgDocuments | undefined;
  /** The daemon's one listening connection (the event log's and the documents' doorbell). */
  private readonly doorbell: Doorbell;
  /** One owner per running turn: leases, commands, the team's heartbeats (on a connection of its own). */
  readonly turnOwnership: PgTurnOwnership;
  /** The tables, each on the store's connection (`run`, `tx`). */
  private readonly sessions: PgSessions;
  private readonly messages: PgMessages;
  private readonly events: PgEvents;

  constructor(opts: PgStoreOptions) {
    this.ready = this.open(opts);
    // Callers see the failure through their own call; this one only keeps it from being "unhandled".
    this.ready.catch(() => {});
    this.doorbell = new Doorbell({
      client: async () => {
        await this.ready;
        const pg = loadPg();
        return new pg.Client({ connectionString: await opts.url, connectionTimeoutMillis: 10_000 });
      },
      name: () => this.redacted,
      onListenError: (err) => opts.onListenError?.(err),
    });
    const teamConn = this.ready.then(async () =>
      SerialConnection.open(await opts.url, (err) => opts.onTeamError?.(err, "the team's connection was lost")),
    );
    teamConn.catch(() => {});
    this.turnOwnership = new PgTurnOwnership(teamConn, {
      daemonId: opts.daemonId,
      version: opts.version,
      leaseTimeoutMs: opts.leaseTimeoutMs,
      name: () => this.redacted,
      log: opts.onTeamError,
    });
    this.teamConn = teamConn;
    this.sharedEvents = new PgSharedEvents(
      {
        run: (fn) => this.run(fn),
        doorbell: this.doorbell,
        fenceOf: (id) => this.turnOwnership.fenceOf(id),
        onOther: (payload) => this.turnOwnership.ring(payload),
      },
      text,
    );
    this.documents =
      opts.documents === false
        ? undefined
        : new PgDocuments(
            () => this.redacted,
            (fn) => this.tx(fn),
            (fn) => this.run(fn),
            this.doorbell,
            text,
          );
    const run: Runner = (fn) => this.run(fn);
    const tx: Runner = (fn) => this.tx(fn);
    this.sessions = new PgSessions(run, tx);
    this.messages = new PgMessages(run, tx, (id) => this.turnOwnership.fenceOf(id));
    this.events = new PgEvents(run, tx);
  }

  private async open(opts: PgStoreOptions): Promise<SerialConnection> {
    const url = await opts.url;
    this.redacted = redactUrl(url);
    try {
      checkUrl(url);
      const conn = await SerialConnection.open(url, (err) => {
        this.lastOk = false;
        opts.onIdleError?.(err);
      });
      try {
        await conn.run((c) => migratePg(c));
      } catch (err) {
        await conn.close().catch(() => {});
        throw err;
      }
      this.conn = conn;
      this.lastOk = true;
      return conn;
    } catch (err) {
      throw new Error(`cannot use the database ${this.redacted}: ${causeOf(err)}`);
    }
  }

  /** Resolves once connected and migrated; rejects with the one-line reason. */
  async opened(): Promise<void> {
    await this.ready;
  }

  status(): PgStoreStatus {
    return { kind: "postgres", url: this.redacted, connected: this.conn !== undefined && this.lastOk };
  }

  private async run<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    const conn = await this.ready;
    return this.track(conn.run(fn));
  }

  private async tx<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    const conn = await this.ready;
    return this.track(conn.transaction(fn));
  }

  private async track<T>(p: Promise<T>): Promise<T> {
    try {
      const v = await p;
      this.lastOk = true;
      return v;
    } catch (err) {
      if (!connectionBroken(err)) throw err;
      this.lastOk = false;
      // The server went away (or cannot be reached): a clear 503, not an internal error; the next call reconnects.
      throw new ApiError(503, `the database ${this.redacted} is unavailable: ${causeOf(err)}`);
    }
  }

  /* ---- sessions (sessions.ts) ---- */

  createSession(rec: SessionRecord): Promise<void> {
    return this.sessions.createSession(rec);
  }

  getSession(id: string): Promise<SessionRecord | undefined> {
    return this.sessions.getSession(id);
  }

  updateSession(id: string, patch: SessionPatch): Promise<SessionRecord | undefined> {
    return this.sessions.updateSession(id, patch);
  }

  deleteSession(id: string): Promise<boolean> {
    return this.sessions.deleteSession(id);
  }

  findByShareToken(token: string): Promise<SessionRecord | undefined> {
    return this.sessions.findByShareToken(token);
  }

  sessionsInDirectory(
    dir: string,
    opts: { below: boolean; after?: SessionDirectory; limit: number },
  ): Promise<SessionDirectory[]> {
    return this.sessions.sessionsInDirectory(dir, opts);
  }

  usedDirectories(dirs: string[]): Promise<string[]> {
    return this.sessions.usedDirectories(dirs);
  }

  distinctDirectories(after: string, limit: number): Promise<string[]> {
    return this.sessions.distinctDirectories(after, limit);
  }

  listSessions(query: ListQuery): Promise<{ sessions: SessionRecord[]; total: number }> {
    return this.sessions.listSessions(query);
  }

  listEntries(query: ListQuery): Promise<{ sessions: SessionListEntry[]; total: number }> {
    return this.sessions.listEntries(query);
  }

  /* ---- messages (messages.ts) ---- */

  appendMessage(sessionId: string, msg: NewMessage): Promise<StoredMessage> {
    return this.messages.appendMessage(sessionId, msg);
  }

  appendMessages(sessionId: string, msgs: NewMessage[]): Promise<void> {
    return this.messages.appendMessages(sessionId, msgs);
  }

  historyPage(sessionId: string, turns: number, beforeSeq?: number): Promise<HistoryPage> {
    return this.messages.historyPage(sessionId, turns, beforeSeq);
  }

  readMessages(sessionId: string, afterSeq: number, limit: number): Promise<StoredMessage[]> {
    return this.messages.readMessages(sessionId, afterSeq, limit);
  }

  contextMessages(sessionId: string): Promise<StoredMessage[]> {
    return this.messages.contextMessages(sessionId);
  }

  markOutOfContext(sessionId: string, uptoSeq?: number): Promise<void> {
    return this.messages.markOutOfContext(sessionId, uptoSeq);
  }

  truncateMessages(sessionId: string, fromSeq: number): Promise<void> {
    return this.messages.truncateMessages(sessionId, fromSeq);
  }

  hasClientMessageId(sessionId: string, clientMessageId: string): Promise<boolean> {
    return this.messages.hasClientMessageId(sessionId, clientMessageId);
  }

  searchMessages(
    query: string,
    opts: { sessionId?: string; excludeSessionId?: string; limit?: number } = {},
  ): Promise<MessageHit[]> {
    return this.messages.searchMessages(query, opts);
  }

  /* ---- events and feed (events.ts) ---- */

  appendEvents(sessionId: string, events: EventToAppend[]): Promise<void> {
    return this.events.appendEvents(sessionId, events);
  }

  readEvents(
    sessionId: string,
    afterSeq: number,
    limit: number,
    opts?: { durableOnly?: boolean },
  ): Promise<StoredEvent[]> {
    return this.events.readEvents(sessionId, afterSeq, limit, opts);
  }

  eventSeqReserved(sessionId: string): Promise<number> {
    return this.events.eventSeqReserved(sessionId);
  }

  reserveEventSeq(sessionId: string, upTo: number): Promise<void> {
    return this.events.reserveEventSeq(sessionId, upTo);
  }

  appendFeed(event: FeedEventToAppend): Promise<void> {
    return this.events.appendFeed(event);
  }

  readFeed(afterSeq: number, limit: number): Promise<StoredEvent[]> {
    return this.events.readFeed(afterSeq, limit);
  }

  feedSeq(): Promise<number> {
    return this.events.feedSeq();
  }

  appendBatch(batch: EventBatch): Promise<void> {
    return this.events.appendBatch(batch);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.turnOwnership.close();
    await (await this.teamConn.catch(() => undefined))?.close();
    await this.doorbell.close();
    const conn = await this.ready.catch(() => undefined);
    await conn?.close();
  }
}
