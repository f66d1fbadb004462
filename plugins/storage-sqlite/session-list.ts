import type Database from "better-sqlite3";
import type { ListQuery, SessionListEntry, SessionRecord } from "../../core/index.js";
import {
  ENTRY_COLS,
  type EntryRaw,
  entryFromRaw,
  LIST_ORDER,
  SESSION_COLS,
  type SessionRow,
  sessionFromRow,
} from "./rows.js";
import { type SearchTerm, searchTerms } from "./search.js";
import type { Statements, Stmt } from "./statements.js";

/** Listing entries missing from memory beyond this many are read with the whole page instead of one by one. */
const ENTRY_READS_BY_ID = 64;
/**
 * Listing entries kept in memory at most, ~8 MiB (the first ones dropped first): without a bound, paging through
 * 100,000 sessions held ~40 MiB for good. A plain-array listing of 10,000 sessions is read from memory within it
 * (65 ms instead of 136 with 2,000 kept).
 */
const MAX_KEPT_ENTRIES = 20_000;
/** Prepared statement pairs kept for session-list query shapes. */
const MAX_LIST_SHAPES = 32;

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

/** A query's page as the statements take it: no limit is -1, no offset 0. */
function paging(query: ListQuery): { limit: number; offset: number } {
  return {
    limit: query.limit !== undefined && query.limit >= 0 ? Math.floor(query.limit) : -1,
    offset: query.offset !== undefined && query.offset > 0 ? Math.floor(query.offset) : 0,
  };
}

/** Matches up to this many are looked up and sorted; more are met walking the list order. */
const LOOKUP_MAX = 2000;

/**
 * The session listing and its search (`listSessions`, `listEntries`), with what it keeps in memory. The daemon is
 * the database's only writer: the store tells it of every write of a session's row (`changed`) and of every
 * session created or deleted (`addedOrRemoved`).
 */
export class SessionListing {
  private readonly listCache = new Map<string, ListStatements>();
  /**
   * Listing entries by session id, frozen and shared, filled by `listEntries`. Every write of a session's row drops
   * its entry, so a listing reads only the ordered ids (a covering index) plus the rows that changed since the last
   * one.
   */
  private readonly entries = new Map<string, SessionListEntry>();
  /**
   * The number of sessions, counted once and then kept until a session is created or deleted: an unfiltered
   * listing's `total` without a count over every row.
   */
  private sessionCount: number | undefined;
  /**
   * The unfiltered listing of every session (GET /sessions as a plain array), frozen, kept until any session's row
   * is written: read again, it costs no query (~4 ms at 10,000 sessions). Not kept beyond MAX_KEPT_ENTRIES.
   */
  private everySession: { sessions: SessionListEntry[]; total: number } | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly q: Statements,
  ) {}

  /** The session's row was written. */
  changed(id: string): void {
    this.entries.delete(id);
    this.everySession = undefined;
  }

  /** A session was created or deleted. */
  addedOrRemoved(id: string): void {
    this.changed(id);
    this.sessionCount = undefined;
  }

  /**
   * Pinned first, then most recently updated. With `q`, every whitespace-separated term must occur in the title
   * or in some user/assistant message of the session (prefix match, terms may be in different messages).
   */
  listSessions(query: ListQuery): { sessions: SessionRecord[]; total: number } {
    const { pages, params, total } = this.listQuery(query);
    return { sessions: pages.page.all(params).map(sessionFromRow), total };
  }
  /** The same listing with only the fields a summary shows: the JSON columns (usage, meta) are never read. */
  listEntries(query: ListQuery): { sessions: SessionListEntry[]; total: number } {
    const { limit, offset } = paging(query);
    const every = limit === -1 && offset === 0 && searchTerms(query.q).length === 0;
    if (every && this.everySession) return this.everySession;
    const listed = this.readEntries(query);
    if (every && listed.sessions.length <= MAX_KEPT_ENTRIES) {
      this.everySession = { sessions: Object.freeze(listed.sessions) as SessionListEntry[], total: listed.total };
    }
    return listed;
  }

  private readEntries(query: ListQuery): { sessions: SessionListEntry[]; total: number } {
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
      for (const e of page) this.keep(Object.freeze(e));
      return { sessions: page, total };
    }
    for (const i of missing) {
      const raw = this.q.entryById.get(ids[i] as string);
      if (!raw) throw new Error(`session ${ids[i]} vanished during a listing`);
      const e = Object.freeze(entryFromRaw(raw));
      this.keep(e);
      sessions[i] = e;
    }
    return { sessions, total };
  }

  private keep(e: SessionListEntry): void {
    if (this.entries.size >= MAX_KEPT_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(e.id, e);
  }

  private listQuery(query: ListQuery) {
    const terms = searchTerms(query.q);
    const stmts = this.listStatements(terms);
    const params: Record<string, unknown> = paging(query);
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
}
