import { closeSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type {
  EventBatch,
  EventToAppend,
  HistoryPage,
  ListQuery,
  MessageHit,
  NewMessage,
  SessionDirectory,
  SessionListEntry,
  SessionRecord,
  SessionStore,
  StoredEvent,
  StoredMessage,
  StoreStatus,
} from "../../core/index.js";
import { ApiError, directoryRange } from "../../core/index.js";
import { migrate } from "./migrations.js";
import {
  ENTRY_COLS,
  type EntryRaw,
  entryFromRaw,
  LIST_ORDER,
  MESSAGE_COLS,
  type MessageRaw,
  messageFromRaw,
  messageFromRow,
  messageToParams,
  SESSION_COLS,
  type SessionRow,
  sessionFromRow,
  sessionToParams,
} from "./rows.js";
import { ftsAllTerms, type SearchTerm, searchTerms } from "./search.js";
import { WalSync } from "./wal-sync.js";

type Stmt<P extends unknown[] | object, R = unknown> = Database.Statement<P, R>;

const DEFAULT_HIT_LIMIT = 20;
/** The in-context rows of the most recently used sessions are kept in memory (bounded by count and size). */
const CONTEXT_CACHE_SESSIONS = 16;
const CONTEXT_CACHE_CHARS = 32 * 1024 * 1024;
const MAX_HIT_LIMIT = 200;
/** Listing entries missing from memory beyond this many are read with the whole page instead of one by one. */
const ENTRY_READS_BY_ID = 64;
/** Prepared statement pairs kept for session-list query shapes. */
const MAX_LIST_SHAPES = 32;
/** Rows per multi-row event insert. */
const EVENT_ROWS = 16;

type SessionPatch = Partial<Omit<SessionRecord, "id" | "createdAt">>;

interface PageStatements {
  page: Stmt<[Record<string, unknown>], SessionRow>;
  entries: Stmt<[Record<string, unknown>], EntryRaw>;
  ids: Stmt<[Record<string, unknown>], string>;
}

/**
 * A search's total and page. When every term can be looked up in the title index (three characters or more), the
 * total is counted through the indexes (the title index matches exactly what the title's LIKE does; a single term
 * counts its titles straight from it, plus the sessions only its messages match), a cost that follows the matches,
 * never the sessions. Otherwise a bound on the matches is read from the index sizes (the entries of the rarest term
 * in the title and message indexes). Up to LOOKUP_MAX matches, the page is collected through the indexes, looked up
 * by id and sorted; beyond, the list order is walked with the condition per session (a common word's page fills
 * within the first few sessions walked), and without an indexed total, the total is counted the same way.
 */
interface ListStatements {
  lookup: PageStatements;
  lookupCount: Stmt<[Record<string, unknown>], { n: number }>;
  walk: PageStatements;
  walkCount: Stmt<[Record<string, unknown>], { n: number }>;
  /** The total through the indexes, when every term has a trigram. */
  indexCount?: Stmt<[Record<string, unknown>], { n: number }>;
}

/** Matches up to this many are looked up and sorted; more are met walking the list order. */
const LOOKUP_MAX = 2000;

type Statements = ReturnType<typeof prepareStatements>;

interface CachedContext {
  rows: StoredMessage[];
  /** Approximate size: the characters of the stored JSON columns. */
  chars: number;
}

/** Opens (creating and migrating as needed) the session database at `file`. */
export function openSqliteStore(file: string): SqliteSessionStore {
  if (file !== ":memory:") {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // SQLite gives the -wal and -shm files the mode of the database: created 0600, they are the user's alone.
    closeSync(openSync(file, "a", 0o600));
  }
  const db = new Database(file, { timeout: 5000 });
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    db.pragma("cache_size = -1024"); // 1 MiB page cache (default 2 MiB): ~7-10 MiB less RSS after long turns (issue 16)
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
  private readonly listCache = new Map<string, ListStatements>();
  /** Per session, what `contextMessages` returns; least recently used first. The daemon is the database's only writer. */
  private readonly contextCache = new Map<string, CachedContext>();
  private contextChars = 0;
  /**
   * Listing entries by session id, frozen and shared, filled by `listEntries`. Every write of a session's row drops
   * its entry (the daemon is the database's only writer), so a listing reads only the ordered ids (a covering index)
   * plus the rows that changed since the last one.
   */
  private readonly entries = new Map<string, SessionListEntry>();
  private closed = false;
  /**
   * The number of sessions, counted once and then kept until a session is created or deleted (the daemon is the
   * database's only writer): an unfiltered listing's `total` without a count over every row.
   */
  private sessionCount: number | undefined;

  private readonly q: Statements;
  private readonly appendTx: (sessionId: string, msg: NewMessage) => StoredMessage;
  private readonly updateTx: (id: string, patch: SessionPatch) => SessionRecord | undefined;
  private readonly deleteTx: (id: string) => boolean;
  private readonly truncateTx: (id: string, fromSeq: number) => void;
  private readonly eventsTx: (id: string, events: EventToAppend[]) => void;

  constructor(
    private readonly db: Database.Database,
    private readonly wal?: WalSync,
  ) {
    const q = prepareStatements(db);
    this.q = q;

    this.appendTx = db.transaction((sessionId: string, msg: NewMessage): StoredMessage => {
      const cur = q.msgSeq.get(sessionId);
      if (!cur) throw ApiError.notFound(`Session not found: ${sessionId}`);
      const seq = cur.msg_seq + 1;
      const now = new Date().toISOString();
      const params = messageToParams(sessionId, seq, msg.createdAt ?? now, msg);
      q.insertMessage.run(params);
      q.afterAppend.run(seq, params.counts, now, sessionId);
      return messageFromRow(params);
    });

    this.updateTx = db.transaction((id: string, patch: SessionPatch): SessionRecord | undefined => {
      const row = q.getSession.get(id);
      if (!row) return undefined;
      const next: SessionRecord = { ...sessionFromRow(row), ...patch, id };
      if (patch.updatedAt === undefined) next.updatedAt = new Date().toISOString();
      q.updateSession.run(sessionToParams(next));
      return next;
    });

    this.deleteTx = db.transaction((id: string): boolean => {
      // Messages go row by row through the FTS delete trigger; events and the session follow.
      q.deleteMessages.run(id);
      q.deleteEvents.run(id);
      return q.deleteSession.run(id).changes > 0;
    });

    this.truncateTx = db.transaction((id: string, fromSeq: number) => {
      q.truncate.run(id, fromSeq);
      q.recount.run(id);
    });

    // Deltas arrive in batches of hundreds: rows go in EVENT_ROWS at a time (one statement step instead of many).
    const params = new Array<unknown>(EVENT_ROWS * 6);
    this.eventsTx = db.transaction((id: string, events: EventToAppend[]) => {
      let i = 0;
      for (; i + EVENT_ROWS <= events.length; i += EVENT_ROWS) {
        for (let j = 0; j < EVENT_ROWS; j++) {
          const e = events[i + j] as EventToAppend;
          const o = j * 6;
          params[o] = id;
          params[o + 1] = e.seq;
          params[o + 2] = e.ts;
          params[o + 3] = e.type;
          params[o + 4] = e.json;
          params[o + 5] = e.ephemeral ? 1 : 0;
        }
        q.insertEvents.run(params);
      }
      for (; i < events.length; i++) {
        const e = events[i] as EventToAppend;
        q.insertEvent.run(id, e.seq, e.ts, e.type, e.json, e.ephemeral ? 1 : 0);
      }
    });
  }

  /* ---- sessions ---- */

  createSession(rec: SessionRecord): void {
    this.entries.delete(rec.id);
    this.sessionCount = undefined;
    this.q.insertSession.run(sessionToParams(rec));
    this.dropContext(rec.id);
  }

  getSession(id: string): SessionRecord | undefined {
    const row = this.q.getSession.get(id);
    return row ? sessionFromRow(row) : undefined;
  }

  updateSession(id: string, patch: SessionPatch): SessionRecord | undefined {
    this.entries.delete(id);
    return this.updateTx(id, patch);
  }

  deleteSession(id: string): boolean {
    this.entries.delete(id);
    this.sessionCount = undefined;
    this.dropContext(id);
    return this.deleteTx(id);
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
    const { pages, params, total } = this.listQuery(query);
    return { sessions: pages.page.all(params).map(sessionFromRow), total };
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

  /** The same listing with only the fields a summary shows: the JSON columns (usage, meta) are never read. */
  listEntries(query: ListQuery): { sessions: SessionListEntry[]; total: number } {
    const { pages, params, total } = this.listQuery(query);
    const ids = pages.ids.all(params);
    const sessions: SessionListEntry[] = new Array(ids.length);
    const missing: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const e = this.entries.get(ids[i] as string);
      if (e) sessions[i] = e;
      else missing.push(i);
    }
    if (missing.length > ENTRY_READS_BY_ID) {
      const page = pages.entries.all(params).map(entryFromRaw);
      for (const e of page) this.entries.set(e.id, Object.freeze(e));
      return { sessions: page, total };
    }
    for (const i of missing) {
      const raw = this.q.entryById.get(ids[i] as string);
      if (!raw) throw new Error(`session ${ids[i]} vanished during a listing`);
      const e = Object.freeze(entryFromRaw(raw));
      this.entries.set(e.id, e);
      sessions[i] = e;
    }
    return { sessions, total };
  }

  private listQuery(query: ListQuery) {
    const terms = searchTerms(query.q);
    const stmts = this.listStatements(terms);
    const params: Record<string, unknown> = {
      limit: query.limit !== undefined && query.limit >= 0 ? Math.floor(query.limit) : -1,
      offset: query.offset !== undefined && query.offset > 0 ? Math.floor(query.offset) : 0,
    };
    terms.forEach((t, i) => {
      params[`like${i}`] = t.like;
      if (t.trigram !== null) params[`tri${i}`] = t.trigram;
      if (t.fts !== null) params[`fts${i}`] = t.fts;
    });
    const { limit: _l, offset: _o, ...filter } = params;
    if (terms.length === 0) {
      this.sessionCount ??= stmts.walkCount.get(filter)?.n ?? 0;
      return { pages: stmts.walk, params, total: this.sessionCount };
    }
    if (stmts.indexCount) {
      const total = stmts.indexCount.get(filter)?.n ?? 0;
      return { pages: total <= LOOKUP_MAX ? stmts.lookup : stmts.walk, params, total };
    }
    if (this.matchBound(terms) <= LOOKUP_MAX) {
      return { pages: stmts.lookup, params, total: stmts.lookupCount.get(filter)?.n ?? 0 };
    }
    return { pages: stmts.walk, params, total: stmts.walkCount.get(filter)?.n ?? 0 };
  }

  /** At least as many as the sessions the terms match (see ListStatements); Infinity without a title index. */
  private matchBound(terms: SearchTerm[]): number {
    let bound = Number.POSITIVE_INFINITY;
    for (const t of terms) {
      if (t.trigram === null) continue;
      const titles = this.q.titleMatches.get(t.trigram)?.n ?? 0;
      const messages = t.fts === null ? 0 : (this.q.messageMatches.get(t.fts)?.n ?? 0);
      bound = Math.min(bound, titles + messages);
    }
    return bound;
  }

  /** One statement pair per query shape (number of terms, which are indexable), built on first use. */
  private listStatements(terms: SearchTerm[]): ListStatements {
    const key = terms.map((t) => (t.fts === null ? "L" : "F") + (t.trigram === null ? "l" : "t")).join("");
    let stmts = this.listCache.get(key);
    if (!stmts) {
      // Up to 2^8 shapes exist (8 terms, each indexable or not): keep the recent ones, prepared statements cost.
      if (this.listCache.size >= MAX_LIST_SHAPES) this.listCache.delete(this.listCache.keys().next().value as string);
      // Per term, the ids of the sessions it matches: in the title (the trigram index finds the candidates, LIKE
      // keeps its exact meaning) or in a message (the full-text index). All terms must match.
      const sets = terms.map((t, i) => {
        const title =
          t.trigram === null
            ? `SELECT id FROM sessions WHERE title LIKE @like${i} ESCAPE '\\'`
            : `SELECT t.session_id FROM session_titles_fts JOIN session_titles t
                ON t.n = session_titles_fts.rowid WHERE session_titles_fts MATCH @tri${i}
                AND t.title LIKE @like${i} ESCAPE '\\'`;
        if (t.fts === null) return title;
        return `${title} UNION SELECT m.session_id FROM messages_fts
          JOIN messages m ON m.id = messages_fts.rowid WHERE messages_fts MATCH @fts${i}`;
      });
      // The same condition per session, for the walk.
      const conds = terms.map((t, i) => {
        const title = `s.title LIKE @like${i} ESCAPE '\\'`;
        if (t.fts === null) return title;
        return `(${title} OR s.id IN (SELECT m.session_id FROM messages_fts
          JOIN messages m ON m.id = messages_fts.rowid WHERE messages_fts MATCH @fts${i}))`;
      });
      const matches = sets.join(" INTERSECT ");
      const where = conds.length > 0 ? `WHERE ${conds.join(" AND ")}` : "";
      const pages = (where: string): PageStatements => ({
        page: this.db.prepare(
          `SELECT ${SESSION_COLS} FROM sessions s ${where} ${LIST_ORDER} LIMIT @limit OFFSET @offset`,
        ),
        entries: this.db
          .prepare<[Record<string, unknown>], EntryRaw>(
            `SELECT ${ENTRY_COLS} FROM sessions s ${where} ${LIST_ORDER} LIMIT @limit OFFSET @offset`,
          )
          .raw(true),
        ids: this.db
          .prepare<[Record<string, unknown>], string>(
            `SELECT s.id FROM sessions s ${where} ${LIST_ORDER} LIMIT @limit OFFSET @offset`,
          )
          .pluck(true),
      });
      const walk = pages(where);
      const counter = (sql: string) => this.db.prepare<[Record<string, unknown>], { n: number }>(sql);
      const walkCount = counter(`SELECT COUNT(*) AS n FROM sessions s ${where}`);
      const lookupCount = terms.length > 0 ? counter(`SELECT COUNT(*) AS n FROM (${matches})`) : walkCount;
      stmts =
        terms.length > 0
          ? { lookup: pages(`WHERE s.id IN (${matches})`), lookupCount, walk, walkCount }
          : { lookup: walk, lookupCount, walk, walkCount };
      if (terms.length > 0 && terms.every((t) => t.trigram !== null)) {
        const [only] = terms;
        // One term: its titles (one count of the title index), plus the sessions whose title does not hold it but
        // a message does (a cost that follows the message matches); no set of ids is built.
        stmts.indexCount =
          terms.length > 1 || !only
            ? lookupCount
            : counter(
                `SELECT (SELECT COUNT(*) FROM session_titles_fts WHERE session_titles_fts MATCH @tri0)${
                  only.fts === null
                    ? ""
                    : ` + (SELECT COUNT(*) FROM sessions s WHERE s.id IN (SELECT m.session_id FROM messages_fts
                      JOIN messages m ON m.id = messages_fts.rowid WHERE messages_fts MATCH @fts0)
                      AND coalesce(s.title, '') NOT LIKE @like0 ESCAPE '\\')`
                } AS n`,
              );
      }
      this.listCache.set(key, stmts);
    }
    return stmts;
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
    this.entries.delete(sessionId);
    const stored = this.appendTx(sessionId, msg);
    const cached = this.contextCache.get(sessionId);
    if (cached && stored.inContext) {
      // A copy of its own: the caller may keep and change the object it got back.
      const copy = structuredCloneMessage(stored);
      cached.rows.push(copy);
      const chars = messageChars(copy);
      cached.chars += chars;
      this.contextChars += chars;
      this.evictContexts();
    }
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
    if (cached) {
      this.contextCache.delete(sessionId);
      this.contextCache.set(sessionId, cached);
      return cached.rows.slice();
    }
    const raw = this.q.inContextRaw.all(sessionId);
    const rows = new Array<StoredMessage>(raw.length);
    let chars = 0;
    for (let i = 0; i < raw.length; i++) {
      const m = messageFromRaw(raw[i] as MessageRaw);
      rows[i] = m;
      chars += messageChars(m);
    }
    if (chars <= CONTEXT_CACHE_CHARS / 4) {
      this.contextCache.set(sessionId, { rows, chars });
      this.contextChars += chars;
      this.evictContexts();
      return rows.slice();
    }
    return rows;
  }

  markOutOfContext(sessionId: string, uptoSeq?: number): void {
    this.dropContext(sessionId);
    this.q.outOfContext.run(sessionId, uptoSeq ?? Number.MAX_SAFE_INTEGER);
  }

  /** The seq counter is kept: a seq that was undone is never handed out again (clients may still show it). */
  truncateMessages(sessionId: string, fromSeq: number): void {
    this.entries.delete(sessionId);
    this.dropContext(sessionId);
    this.truncateTx(sessionId, fromSeq);
  }

  private dropContext(sessionId: string): void {
    const cached = this.contextCache.get(sessionId);
    if (!cached) return;
    this.contextCache.delete(sessionId);
    this.contextChars -= cached.chars;
  }

  private evictContexts(): void {
    for (const [id, c] of this.contextCache) {
      if (this.contextCache.size <= CONTEXT_CACHE_SESSIONS && this.contextChars <= CONTEXT_CACHE_CHARS) return;
      this.contextCache.delete(id);
      this.contextChars -= c.chars;
    }
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
    if (events.length > 0) this.eventsTx(sessionId, events);
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
    this.q.reserveEventSeq.run(upTo, sessionId);
  }

  /* ---- feed ---- */

  appendFeed(event: { seq: number; ts: string; type: string; json: string }): void {
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
    try {
      return this.db.transaction(fn)();
    } catch (err) {
      // Appends inside the batch were rolled back with it: the cached working sets may hold some of them.
      this.contextCache.clear();
      this.contextChars = 0;
      throw err;
    }
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
    this.wal?.close();
    this.db.close();
  }
}

function messageChars(m: StoredMessage): number {
  let n = 64 + (typeof m.content === "string" ? m.content.length : JSON.stringify(m.content ?? null).length);
  if (m.toolCalls) for (const c of m.toolCalls) n += c.arguments.length + 64;
  if (m.thinking) n += m.thinking.length;
  return n;
}

function structuredCloneMessage(m: StoredMessage): StoredMessage {
  return structuredClone(m);
}

/** Every fixed statement of the store, prepared once per connection. */
function prepareStatements(db: Database.Database) {
  const prep = <P extends unknown[], R = unknown>(sql: string): Stmt<P, R> => db.prepare<P, R>(sql);
  return {
    insertSession: prep<[object]>(`INSERT INTO sessions (id, title, pinned, persona, model, cwd, mode, is_sandbox,
        share_token, message_count, usage, meta, created_at, updated_at)
      VALUES (@id, @title, @pinned, @persona, @model, @cwd, @mode, @is_sandbox, @share_token, @message_count, @usage,
        @meta, @created_at, @updated_at)`),
    updateSession: prep<[object]>(`UPDATE sessions SET title = @title, pinned = @pinned, persona = @persona,
        model = @model, cwd = @cwd, mode = @mode, is_sandbox = @is_sandbox, share_token = @share_token,
        message_count = @message_count, usage = @usage, meta = @meta, updated_at = @updated_at
      WHERE id = @id`),
    entryById: db.prepare<[string], EntryRaw>(`SELECT ${ENTRY_COLS} FROM sessions s WHERE s.id = ?`).raw(true),
    getSession: prep<[string], SessionRow>(`SELECT ${SESSION_COLS} FROM sessions s WHERE s.id = ?`),
    byShareToken: prep<[string], SessionRow>(`SELECT ${SESSION_COLS} FROM sessions s WHERE s.share_token = ?`),
    deleteSession: prep<[string]>("DELETE FROM sessions WHERE id = ?"),
    deleteMessages: prep<[string]>("DELETE FROM messages WHERE session_id = ?"),
    deleteEvents: prep<[string]>("DELETE FROM events WHERE session_id = ?"),

    msgSeq: prep<[string], { msg_seq: number }>("SELECT msg_seq FROM sessions WHERE id = ?"),
    titleMatches: prep<[string], { n: number }>(
      "SELECT COUNT(*) AS n FROM session_titles_fts WHERE session_titles_fts MATCH ?",
    ),
    messageMatches: prep<[string], { n: number }>("SELECT COUNT(*) AS n FROM messages_fts WHERE messages_fts MATCH ?"),
    // The index sessions_cwd (cwd, id) answers the three directory queries: a seek per page or per directory.
    sessionsAt: prep<[string, string, number], SessionDirectory>(
      "SELECT id, cwd FROM sessions WHERE cwd = ? AND id > ? ORDER BY id LIMIT ?",
    ),
    // The directory itself and everything below it: [dir, end) holds both, and names like "dir-old" that sort
    // between the directory and its "dir/" prefix are left out by the condition.
    sessionsBelow: prep<[object], SessionDirectory>(`SELECT id, cwd FROM sessions
      WHERE cwd >= @dir AND cwd < @end AND (cwd = @dir OR cwd >= @prefix) AND (cwd, id) > (@cwd, @id)
      ORDER BY cwd, id LIMIT @limit`),
    usedDirectories: db
      .prepare<[string], string>(
        "SELECT DISTINCT cwd FROM sessions WHERE cwd IN (SELECT value FROM json_each(?)) ORDER BY cwd",
      )
      .pluck(true),
    // A seek per directory (a loose index scan), whatever the number of sessions in each.
    distinctDirectories: db
      .prepare<[{ after: string; limit: number }], string>(`WITH RECURSIVE d (cwd) AS (
          SELECT (SELECT MIN(cwd) FROM sessions WHERE cwd > @after)
          UNION ALL
          SELECT (SELECT MIN(s.cwd) FROM sessions s WHERE s.cwd > d.cwd) FROM d WHERE d.cwd IS NOT NULL
          LIMIT @limit
        )
        SELECT cwd FROM d WHERE cwd IS NOT NULL`)
      .pluck(true),
    insertMessage: prep<[object]>(`INSERT INTO messages (session_id, seq, role, content, tool_calls, tool_call_id,
        tool_name, thinking, client_message_id, in_context, created_at, meta, search_text, counts)
      VALUES (@session_id, @seq, @role, @content, @tool_calls, @tool_call_id, @tool_name, @thinking,
        @client_message_id, @in_context, @created_at, @meta, @search_text, @counts)`),
    afterAppend: prep<[number, number, string, string]>(
      "UPDATE sessions SET msg_seq = ?, message_count = message_count + ?, updated_at = ? WHERE id = ?",
    ),
    // Walks the partial index of user rows backwards: cost is the page size, not the session size.
    nthUserTurn: prep<[string, number, number], { seq: number }>(`SELECT seq FROM messages
      WHERE session_id = ? AND seq < ? AND role = 'user' ORDER BY seq DESC LIMIT 1 OFFSET ?`),
    // Rows as arrays (see inContextRaw): a whole-history read builds thousands.
    messageRange: db
      .prepare<[string, number, number], MessageRaw>(`SELECT ${MESSAGE_COLS} FROM messages
      WHERE session_id = ? AND seq >= ? AND seq < ? ORDER BY seq`)
      .raw(true),
    messagesAfter: db
      .prepare<[string, number, number], MessageRaw>(`SELECT ${MESSAGE_COLS} FROM messages
      WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`)
      .raw(true),
    anyBefore: prep<[string, number], { one: number }>(
      "SELECT 1 AS one FROM messages WHERE session_id = ? AND seq < ? LIMIT 1",
    ),
    // Rows as arrays: better-sqlite3 builds them much faster than objects keyed by column name.
    inContextRaw: db
      .prepare<[string], MessageRaw>(`SELECT ${MESSAGE_COLS} FROM messages
      WHERE session_id = ? AND in_context = 1 ORDER BY seq`)
      .raw(true),
    outOfContext: prep<[string, number]>(
      "UPDATE messages SET in_context = 0 WHERE session_id = ? AND seq <= ? AND in_context = 1",
    ),
    truncate: prep<[string, number]>("DELETE FROM messages WHERE session_id = ? AND seq >= ?"),
    recount: prep<[string]>(`UPDATE sessions
      SET message_count = (SELECT COALESCE(SUM(counts), 0) FROM messages WHERE session_id = sessions.id)
      WHERE id = ?`),
    clientId: prep<[string, string], { one: number }>(
      "SELECT 1 AS one FROM messages WHERE session_id = ? AND client_message_id = ? LIMIT 1",
    ),
    // Newest first straight from the FTS rowid order, so LIMIT stops the scan early.
    search: prep<[object], MessageHit>(`SELECT m.session_id AS sessionId, s.title AS sessionTitle, m.seq AS seq,
        m.role AS role, snippet(messages_fts, 0, '', '', '…', 16) AS snippet, m.created_at AS createdAt
      FROM messages_fts
        JOIN messages m ON m.id = messages_fts.rowid
        JOIN sessions s ON s.id = m.session_id
      WHERE messages_fts MATCH @match
        AND (@exclude_id IS NULL OR m.session_id <> @exclude_id)
      ORDER BY messages_fts.rowid DESC LIMIT @limit`),

    // One session's hits: its messages newest first, each checked against the index by rowid, so a common word
    // costs what the session holds, not what every session holds.
    searchSession: prep<[object], MessageHit>(`SELECT m.session_id AS sessionId, s.title AS sessionTitle, m.seq AS seq,
        m.role AS role, (SELECT snippet(messages_fts, 0, '', '', '…', 16) FROM messages_fts
          WHERE messages_fts MATCH @match AND messages_fts.rowid = m.id) AS snippet, m.created_at AS createdAt
      FROM messages m JOIN sessions s ON s.id = m.session_id
      WHERE m.session_id = @session_id
        AND EXISTS (SELECT 1 FROM messages_fts WHERE messages_fts MATCH @match AND messages_fts.rowid = m.id)
      ORDER BY m.seq DESC LIMIT @limit`),

    insertEvent: prep<[string, number, string, string, string, number]>(
      "INSERT OR IGNORE INTO events (session_id, seq, ts, type, json, ephemeral) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    insertEvents: prep<unknown[]>(
      `INSERT OR IGNORE INTO events (session_id, seq, ts, type, json, ephemeral) VALUES ${Array(EVENT_ROWS)
        .fill("(?, ?, ?, ?, ?, ?)")
        .join(", ")}`,
    ),
    readEvents: prep<[string, number, number], StoredEvent>(
      "SELECT seq, ts, type, json FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
    ),
    readDurableEvents: prep<[string, number, number], StoredEvent>(
      "SELECT seq, ts, type, json FROM events WHERE session_id = ? AND seq > ? AND ephemeral = 0 ORDER BY seq LIMIT ?",
    ),
    eventSeqReserved: prep<[string], { r: number }>("SELECT event_seq_reserved AS r FROM sessions WHERE id = ?"),
    reserveEventSeq: prep<[number, string]>("UPDATE sessions SET event_seq_reserved = ? WHERE id = ?"),

    insertFeed: prep<[number, string, string, string]>(
      "INSERT OR IGNORE INTO feed (seq, ts, type, json) VALUES (?, ?, ?, ?)",
    ),
    readFeed: prep<[number, number], StoredEvent>(
      "SELECT seq, ts, type, json FROM feed WHERE seq > ? ORDER BY seq LIMIT ?",
    ),
    feedSeq: prep<[], { s: number | null }>("SELECT MAX(seq) AS s FROM feed"),
  };
}
