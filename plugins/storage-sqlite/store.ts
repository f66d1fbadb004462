import { closeSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import type Database from "better-sqlite3";
import type {
  EventBatch,
  EventToAppend,
  HistoryPage,
  ListQuery,
  NewMessage,
  SessionDirectory,
  SessionListEntry,
  SessionRecord,
  SessionStore,
  StoredEvent,
  StoredMessage,
  StoreStatus,
} from "../../core/index.js";
import { directoryRange } from "../../core/index.js";
import { ContextCache, messageChars } from "./context-cache.js";
import { openDatabase } from "./database.js";
import { IndexMerger } from "./index-merger.js";
import { migrate } from "./migrations.js";
import { QuietCheckpoint } from "./quiet-checkpoint.js";
import { type MessageRaw, messageFromRaw, sessionFromRow, sessionToParams } from "./rows.js";
import { ftsAllTerms, searchTerms } from "./search.js";
import { SessionListing } from "./session-list.js";
import { prepareStatements, type Statements } from "./statements.js";
import { prepareTransactions, type SessionPatch, type StoreTransactions } from "./transactions.js";
import { WalSync } from "./wal-sync.js";

const DEFAULT_HIT_LIMIT = 20;
const MAX_HIT_LIMIT = 200;

/** Opens (creating and migrating as needed) the session database at `file`. */
export function openSqliteStore(file: string): SqliteSessionStore {
  if (file !== ":memory:") {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // SQLite gives the -wal and -shm files the mode of the database: created 0600, they are the user's alone.
    closeSync(openSync(file, "a", 0o600));
  }
  const db = openDatabase(file, { timeout: 5000 });
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    db.pragma("cache_size = -1024"); // 1 MiB page cache (default 2 MiB): ~7-10 MiB less RSS after long turns (issue 16)
    // Reads through a memory map of the database file: a page is read where it lies instead of copied into the small
    // page cache above by a system call. At 100,000 sessions, a search's count 9.7 -> 9.0 ms, its walk to the first
    // page 0.74 -> 0.34 (docs/benchmarks.md, issue 27). The mapped pages are the kernel's page cache.
    db.pragma("mmap_size = 268435456");
    migrate(db, file);
    return new SqliteSessionStore(db, file === ":memory:" ? undefined : new WalSync(file));
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * The SessionStore on SQLite. Every statement is prepared once; every write touching more than one row runs in a
 * transaction, so a crash never leaves a message without its session counters (or the FTS index out of step).
 *
 * Durability: commits survive the process dying as soon as they return (WAL, `synchronous = NORMAL`). A message
 * append, which the turn announces to clients once it settles, also survives a power loss: its promise settles once
 * the WAL is synced (`WalSync`, off the event loop, one sync for every commit made meanwhile). Events, deltas and
 * session metadata are not waited for: what they announce is either rebuilt at the next start (the end of a turn) or
 * carried by a message.
 */
export class SqliteSessionStore implements SessionStore {
  private readonly contextCache = new ContextCache();
  private readonly listing: SessionListing;
  private closed = false;
  private readonly q: Statements;
  private readonly tx: StoreTransactions;
  private readonly merger: IndexMerger;
  /** On a database file: its WAL checkpointed when the writes pause. */
  private readonly checkpoint: QuietCheckpoint | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly wal?: WalSync,
  ) {
    this.q = prepareStatements(db);
    this.tx = prepareTransactions(db, this.q);
    this.listing = new SessionListing(db, this.q);
    this.checkpoint = wal ? new QuietCheckpoint(db) : undefined;
    this.merger = new IndexMerger(db, () => this.checkpoint?.wrote());
    // Merge work a stop left unfinished (a large import, then a restart) resumes shortly after the open.
    this.merger.wrote();
  }

  /* ---- sessions ---- */

  createSession(rec: SessionRecord): void {
    this.checkpoint?.wrote();
    this.listing.addedOrRemoved(rec.id);
    this.merger.wrote();
    this.q.insertSession.run(sessionToParams(rec));
    this.contextCache.drop(rec.id);
  }

  getSession(id: string): SessionRecord | undefined {
    const row = this.q.getSession.get(id);
    return row ? sessionFromRow(row) : undefined;
  }

  updateSession(id: string, patch: SessionPatch): SessionRecord | undefined {
    this.checkpoint?.wrote();
    this.listing.changed(id);
    if (patch.title !== undefined) this.merger.wrote();
    return this.tx.update(id, patch);
  }

  deleteSession(id: string): boolean {
    this.checkpoint?.wrote();
    this.listing.addedOrRemoved(id);
    this.contextCache.drop(id);
    this.merger.wrote();
    return this.tx.remove(id);
  }

  findByShareToken(token: string): SessionRecord | undefined {
    const row = this.q.byShareToken.get(token);
    return row ? sessionFromRow(row) : undefined;
  }

  /**
   * Pinned first, then most recently updated. With `q`, every whitespace-separated term must occur in the title
   * or in some user/assistant message of the session (prefix match, terms may be in different messages).
   */
  listSessions(query: ListQuery): { sessions: SessionRecord[]; total: number } {
    return this.listing.listSessions(query);
  }

  /** The same listing with only the fields a summary shows: the JSON columns (usage, meta) are never read. */
  listEntries(query: ListQuery): { sessions: SessionListEntry[]; total: number } {
    return this.listing.listEntries(query);
  }

  sessionsInDirectory(
    dir: string,
    opts: { below: boolean; after?: SessionDirectory; limit: number },
  ): SessionDirectory[] {
    const limit = Math.max(1, Math.floor(opts.limit));
    if (!opts.below) return this.q.sessionsAt.all(dir, opts.after?.id ?? "", limit);
    const { prefix, end } = directoryRange(dir);
    const after = opts.after ?? { cwd: "", id: "" };
    return this.q.sessionsBelow.all({ dir, prefix, end, cwd: after.cwd, id: after.id, limit });
  }

  usedDirectories(dirs: string[]): string[] {
    return dirs.length === 0 ? [] : this.q.usedDirectories.all(JSON.stringify(dirs));
  }

  distinctDirectories(after: string, limit: number): string[] {
    return this.q.distinctDirectories.all({ after, limit: Math.max(1, Math.floor(limit)) });
  }

  /* ---- messages ---- */

  /** Several messages in one transaction (imports, forks); settles once they are durable. */
  appendMessages(sessionId: string, msgs: NewMessage[]): void | Promise<void> {
    this.batch(() => {
      for (const m of msgs) this.append(sessionId, m);
    });
    return this.wal?.sync();
  }

  /**
   * Committed when it returns; settles once durable (on a database file: after the WAL sync, see the class). An
   * in-memory database answers synchronously.
   */
  appendMessage(sessionId: string, msg: NewMessage): StoredMessage | Promise<StoredMessage> {
    const stored = this.append(sessionId, msg);
    // Inside `batch` the commit is the batch's: its caller decides when it is durable.
    return this.wal && !this.db.inTransaction ? this.wal.sync().then(() => stored) : stored;
  }

  private append(sessionId: string, msg: NewMessage): StoredMessage {
    this.checkpoint?.wrote();
    this.listing.changed(sessionId);
    const stored = this.tx.append(sessionId, msg);
    this.contextCache.appended(sessionId, stored);
    this.merger.wrote();
    return stored;
  }

  /** `turns` below 1 (or not finite) means the whole history before `beforeSeq`. */
  historyPage(sessionId: string, turns: number, beforeSeq?: number): HistoryPage {
    const bound = beforeSeq ?? Number.MAX_SAFE_INTEGER;
    let start = 0;
    if (Number.isFinite(turns) && turns >= 1) {
      // Fewer user turns than asked for: the page reaches back to the very first row.
      start = this.q.nthUserTurn.get(sessionId, bound, Math.floor(turns) - 1)?.seq ?? 0;
    }
    const messages = this.q.messageRange.all(sessionId, start, bound).map(messageFromRaw);
    const first = messages[0];
    if (!first) return { messages, oldestSeq: null, hasMoreHistory: false };
    return {
      messages,
      oldestSeq: first.seq,
      hasMoreHistory: this.q.anyBefore.get(sessionId, first.seq) !== undefined,
    };
  }

  readMessages(sessionId: string, afterSeq: number, limit: number): StoredMessage[] {
    return this.q.messagesAfter.all(sessionId, afterSeq, Math.max(1, Math.floor(limit))).map(messageFromRaw);
  }

  /**
   * Read for every model call, so served from memory once read: the rows are kept per session (the most recently
   * used ones, bounded) and kept up to date by appends; anything else that changes the working set drops them.
   * A fresh array every time; its messages are shared, and callers treat them as read-only.
   */
  contextMessages(sessionId: string): StoredMessage[] {
    const cached = this.contextCache.get(sessionId);
    if (cached) return cached;
    const raw = this.q.inContextRaw.all(sessionId);
    const rows = new Array<StoredMessage>(raw.length);
    let chars = 0;
    for (let i = 0; i < raw.length; i++) {
      const m = messageFromRaw(raw[i] as MessageRaw);
      rows[i] = m;
      chars += messageChars(m);
    }
    return this.contextCache.keep(sessionId, rows, chars);
  }

  markOutOfContext(sessionId: string, uptoSeq?: number): void {
    this.checkpoint?.wrote();
    this.contextCache.drop(sessionId);
    this.q.outOfContext.run(sessionId, uptoSeq ?? Number.MAX_SAFE_INTEGER);
  }

  /** The seq counter is kept: a seq that was undone is never handed out again (clients may still show it). */
  truncateMessages(sessionId: string, fromSeq: number): void {
    this.checkpoint?.wrote();
    this.listing.changed(sessionId);
    this.contextCache.drop(sessionId);
    this.merger.wrote();
    this.tx.truncate(sessionId, fromSeq);
  }

  hasClientMessageId(sessionId: string, clientMessageId: string): boolean {
    return this.q.clientId.get(sessionId, clientMessageId) !== undefined;
  }

  /** All terms must occur in the same message (prefix match); blank or non-indexable queries find nothing. */
  searchMessages(query: string, opts: { sessionId?: string; excludeSessionId?: string; limit?: number } = {}) {
    const match = ftsAllTerms(searchTerms(query));
    if (match === null) return [];
    const limit = Math.min(Math.max(Math.floor(opts.limit ?? DEFAULT_HIT_LIMIT), 1), MAX_HIT_LIMIT);
    if (opts.sessionId !== undefined) return this.q.searchSession.all({ match, session_id: opts.sessionId, limit });
    return this.q.search.all({
      match,
      exclude_id: opts.excludeSessionId ?? null,
      limit,
    });
  }

  /* ---- events ---- */

  /** Duplicate seqs are ignored: a batch retried after a partial failure must not fail again. */
  appendEvents(sessionId: string, events: EventToAppend[]): void {
    this.checkpoint?.wrote();
    if (events.length > 0) this.tx.appendEvents(sessionId, events);
  }

  readEvents(sessionId: string, afterSeq: number, limit: number, opts?: { durableOnly?: boolean }): StoredEvent[] {
    if (!(limit > 0)) return [];
    const stmt = opts?.durableOnly ? this.q.readDurableEvents : this.q.readEvents;
    return stmt.all(sessionId, afterSeq, Math.floor(limit));
  }

  /** 0 for an unknown session, like a session that has no events yet. */
  eventSeqReserved(sessionId: string): number {
    return this.q.eventSeqReserved.get(sessionId)?.r ?? 0;
  }

  /** A no-op for an unknown session (deleted while its log still held a reservation). */
  reserveEventSeq(sessionId: string, upTo: number): void {
    this.checkpoint?.wrote();
    this.q.reserveEventSeq.run(upTo, sessionId);
  }

  /* ---- feed ---- */

  appendFeed(event: { seq: number; ts: string; type: string; json: string }): void {
    this.checkpoint?.wrote();
    this.q.insertFeed.run(event.seq, event.ts, event.type, event.json);
  }

  readFeed(afterSeq: number, limit: number): StoredEvent[] {
    if (!(limit > 0)) return [];
    return this.q.readFeed.all(afterSeq, Math.floor(limit));
  }

  feedSeq(): number {
    return this.q.feedSeq.get()?.s ?? 0;
  }

  /** The event log's flush: every session's pending events and the feed's, in one transaction. */
  appendBatch(batch: EventBatch): void {
    this.batch(() => {
      for (const s of batch.sessions) this.appendEvents(s.sessionId, s.events);
      for (const e of batch.feed) this.appendFeed(e);
    });
  }

  /**
   * Runs `fn` as one transaction; the store calls inside it nest as savepoints. One commit instead of one per call
   * makes bulk writes (imports, copying a history) an order of magnitude faster. Not part of SessionStore.
   */
  batch<T>(fn: () => T): T {
    this.checkpoint?.wrote();
    try {
      return this.db.transaction(fn)();
    } catch (err) {
      // Appends inside the batch were rolled back with it: the cached working sets may hold some of them.
      this.contextCache.clear();
      throw err;
    }
  }

  /** Resolves once the checkpoint due after the last write has run (QuietCheckpoint). Not part of SessionStore. */
  walCheckpointed(): Promise<void> {
    return this.checkpoint?.checkpointed() ?? Promise.resolve();
  }

  /** Resolves once the full-text indexes have no merge work left (see IndexMerger). Not part of SessionStore. */
  indexMerged(): Promise<void> {
    return this.merger.merged();
  }

  status(): StoreStatus {
    return {
      kind: "sqlite",
      url: this.db.name === ":memory:" ? undefined : `file:${this.db.name}`,
      connected: !this.closed,
    };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.merger.close();
    this.checkpoint?.close();
    this.wal?.close();
    this.db.close();
  }
}
