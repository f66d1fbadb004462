import type Database from "better-sqlite3";
import type { MessageHit, SessionDirectory, StoredEvent } from "../../core/index.js";
import { ENTRY_COLS, type EntryRaw, MESSAGE_COLS, type MessageRaw, SESSION_COLS, type SessionRow } from "./rows.js";

export type Stmt<P extends unknown[] | object, R = unknown> = Database.Statement<P, R>;

/** Rows per multi-row event insert. */
export const EVENT_ROWS = 16;

/** Every fixed statement of the store. */
export interface Statements {
  insertSession: Stmt<[object]>;
  updateSession: Stmt<[object]>;
  entryById: Stmt<[string], EntryRaw>;
  getSession: Stmt<[string], SessionRow>;
  byShareToken: Stmt<[string], SessionRow>;
  deleteSession: Stmt<[string]>;
  deleteMessages: Stmt<[string]>;
  deleteEvents: Stmt<[string]>;
  msgSeq: Stmt<[string], { msg_seq: number }>;
  titleMatches: Stmt<[string], { n: number }>;
  messageMatches: Stmt<[string], { n: number }>;
  sessionsAt: Stmt<[string, string, number], SessionDirectory>;
  sessionsBelow: Stmt<[object], SessionDirectory>;
  usedDirectories: Stmt<[string], string>;
  distinctDirectories: Stmt<[{ after: string; limit: number }], string>;
  insertMessage: Stmt<[object]>;
  afterAppend: Stmt<[number, number, string, string]>;
  nthUserTurn: Stmt<[string, number, number], { seq: number }>;
  messageRange: Stmt<[string, number, number], MessageRaw>;
  messagesAfter: Stmt<[string, number, number], MessageRaw>;
  anyBefore: Stmt<[string, number], { one: number }>;
  inContextRaw: Stmt<[string], MessageRaw>;
  outOfContext: Stmt<[string, number]>;
  truncate: Stmt<[string, number]>;
  recount: Stmt<[string]>;
  clientId: Stmt<[string, string], { one: number }>;
  search: Stmt<[object], MessageHit>;
  searchSession: Stmt<[object], MessageHit>;
  insertEvent: Stmt<[string, number, string, string, string, number]>;
  insertEvents: Stmt<unknown[]>;
  readEvents: Stmt<[string, number, number], StoredEvent>;
  readDurableEvents: Stmt<[string, number, number], StoredEvent>;
  eventSeqReserved: Stmt<[string], { r: number }>;
  reserveEventSeq: Stmt<[number, string]>;
  insertFeed: Stmt<[number, string, string, string]>;
  readFeed: Stmt<[number, number], StoredEvent>;
  feedSeq: Stmt<[], { s: number | null }>;
}

/** Every fixed statement of the store, prepared once per connection. */
export function prepareStatements(db: Database.Database): Statements {
  const prep = <P extends unknown[], R>(sql: string): Stmt<P, R> => db.prepare<P, R>(sql);
  /** Rows as arrays. */
  const raw = <P extends unknown[], R>(sql: string): Stmt<P, R> => db.prepare<P, R>(sql).raw(true);
  /** The first column's values. */
  const pluck = <P extends unknown[], R>(sql: string): Stmt<P, R> => db.prepare<P, R>(sql).pluck(true);
  return {
    insertSession: prep(`INSERT INTO sessions (id, title, pinned, persona, model, cwd, mode, is_sandbox,
        share_token, message_count, usage, meta, created_at, updated_at)
      VALUES (@id, @title, @pinned, @persona, @model, @cwd, @mode, @is_sandbox, @share_token, @message_count, @usage,
        @meta, @created_at, @updated_at)`),
    updateSession: prep(`UPDATE sessions SET title = @title, pinned = @pinned, persona = @persona,
        model = @model, cwd = @cwd, mode = @mode, is_sandbox = @is_sandbox, share_token = @share_token,
        message_count = @message_count, usage = @usage, meta = @meta, updated_at = @updated_at
      WHERE id = @id`),
    entryById: raw(`SELECT ${ENTRY_COLS} FROM sessions s WHERE s.id = ?`),
    getSession: prep(`SELECT ${SESSION_COLS} FROM sessions s WHERE s.id = ?`),
    byShareToken: prep(`SELECT ${SESSION_COLS} FROM sessions s WHERE s.share_token = ?`),
    deleteSession: prep("DELETE FROM sessions WHERE id = ?"),
    deleteMessages: prep("DELETE FROM messages WHERE session_id = ?"),
    deleteEvents: prep("DELETE FROM events WHERE session_id = ?"),

    msgSeq: prep("SELECT msg_seq FROM sessions WHERE id = ?"),
    titleMatches: prep("SELECT COUNT(*) AS n FROM session_titles_fts WHERE session_titles_fts MATCH ?"),
    messageMatches: prep("SELECT COUNT(*) AS n FROM messages_fts WHERE messages_fts MATCH ?"),
    // The index sessions_cwd (cwd, id) answers the three directory queries: a seek per page or per directory.
    sessionsAt: prep("SELECT id, cwd FROM sessions WHERE cwd = ? AND id > ? ORDER BY id LIMIT ?"),
    // The directory itself and everything below it: [dir, end) holds both, and names like "dir-old" that sort
    // between the directory and its "dir/" prefix are left out by the condition.
    sessionsBelow: prep(`SELECT id, cwd FROM sessions
      WHERE cwd >= @dir AND cwd < @end AND (cwd = @dir OR cwd >= @prefix) AND (cwd, id) > (@cwd, @id)
      ORDER BY cwd, id LIMIT @limit`),
    usedDirectories: pluck(
      "SELECT DISTINCT cwd FROM sessions WHERE cwd IN (SELECT value FROM json_each(?)) ORDER BY cwd",
    ),
    // A seek per directory (a loose index scan), whatever the number of sessions in each.
    distinctDirectories: pluck(`WITH RECURSIVE d (cwd) AS (
          SELECT (SELECT MIN(cwd) FROM sessions WHERE cwd > @after)
          UNION ALL
          SELECT (SELECT MIN(s.cwd) FROM sessions s WHERE s.cwd > d.cwd) FROM d WHERE d.cwd IS NOT NULL
          LIMIT @limit
        )
        SELECT cwd FROM d WHERE cwd IS NOT NULL`),
    insertMessage: prep(`INSERT INTO messages (session_id, seq, role, content, tool_calls, tool_call_id,
        tool_name, thinking, client_message_id, in_context, created_at, meta, search_text, counts)
      VALUES (@session_id, @seq, @role, @content, @tool_calls, @tool_call_id, @tool_name, @thinking,
        @client_message_id, @in_context, @created_at, @meta, @search_text, @counts)`),
    afterAppend: prep(
      "UPDATE sessions SET msg_seq = ?, message_count = message_count + ?, updated_at = ? WHERE id = ?",
    ),
    // Walks the partial index of user rows backwards: cost is the page size, not the session size.
    nthUserTurn: prep(`SELECT seq FROM messages
      WHERE session_id = ? AND seq < ? AND role = 'user' ORDER BY seq DESC LIMIT 1 OFFSET ?`),
    // Rows as arrays (see inContextRaw): a whole-history read builds thousands.
    messageRange: raw(`SELECT ${MESSAGE_COLS} FROM messages
      WHERE session_id = ? AND seq >= ? AND seq < ? ORDER BY seq`),
    messagesAfter: raw(`SELECT ${MESSAGE_COLS} FROM messages
      WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`),
    anyBefore: prep("SELECT 1 AS one FROM messages WHERE session_id = ? AND seq < ? LIMIT 1"),
    // Rows as arrays: better-sqlite3 builds them much faster than objects keyed by column name.
    inContextRaw: raw(`SELECT ${MESSAGE_COLS} FROM messages
      WHERE session_id = ? AND in_context = 1 ORDER BY seq`),
    outOfContext: prep("UPDATE messages SET in_context = 0 WHERE session_id = ? AND seq <= ? AND in_context = 1"),
    truncate: prep("DELETE FROM messages WHERE session_id = ? AND seq >= ?"),
    recount: prep(`UPDATE sessions
      SET message_count = (SELECT COALESCE(SUM(counts), 0) FROM messages WHERE session_id = sessions.id)
      WHERE id = ?`),
    clientId: prep("SELECT 1 AS one FROM messages WHERE session_id = ? AND client_message_id = ? LIMIT 1"),
    // Newest first straight from the FTS rowid order, so LIMIT stops the scan early.
    search: prep(`SELECT m.session_id AS sessionId, s.title AS sessionTitle, m.seq AS seq,
        m.role AS role, snippet(messages_fts, 0, '', '', '…', 16) AS snippet, m.created_at AS createdAt
      FROM messages_fts
        JOIN messages m ON m.id = messages_fts.rowid
        JOIN sessions s ON s.id = m.session_id
      WHERE messages_fts MATCH @match
        AND (@exclude_id IS NULL OR m.session_id <> @exclude_id)
      ORDER BY messages_fts.rowid DESC LIMIT @limit`),

    // One session's hits: its messages newest first, each checked against the index by rowid, so a common word
    // costs what the session holds, not what every session holds.
    searchSession: prep(`SELECT m.session_id AS sessionId, s.title AS sessionTitle, m.seq AS seq,
        m.role AS role, (SELECT snippet(messages_fts, 0, '', '', '…', 16) FROM messages_fts
          WHERE messages_fts MATCH @match AND messages_fts.rowid = m.id) AS snippet, m.created_at AS createdAt
      FROM messages m JOIN sessions s ON s.id = m.session_id
      WHERE m.session_id = @session_id
        AND EXISTS (SELECT 1 FROM messages_fts WHERE messages_fts MATCH @match AND messages_fts.rowid = m.id)
      ORDER BY m.seq DESC LIMIT @limit`),

    insertEvent: prep(
      "INSERT OR IGNORE INTO events (session_id, seq, ts, type, json, ephemeral) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    insertEvents: prep(
      `INSERT OR IGNORE INTO events (session_id, seq, ts, type, json, ephemeral) VALUES ${Array(EVENT_ROWS)
        .fill("(?, ?, ?, ?, ?, ?)")
        .join(", ")}`,
    ),
    readEvents: prep("SELECT seq, ts, type, json FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?"),
    readDurableEvents: prep(
      "SELECT seq, ts, type, json FROM events WHERE session_id = ? AND seq > ? AND ephemeral = 0 ORDER BY seq LIMIT ?",
    ),
    eventSeqReserved: prep("SELECT event_seq_reserved AS r FROM sessions WHERE id = ?"),
    reserveEventSeq: prep("UPDATE sessions SET event_seq_reserved = ? WHERE id = ?"),

    insertFeed: prep("INSERT OR IGNORE INTO feed (seq, ts, type, json) VALUES (?, ?, ?, ?)"),
    readFeed: prep("SELECT seq, ts, type, json FROM feed WHERE seq > ? ORDER BY seq LIMIT ?"),
    feedSeq: prep("SELECT MAX(seq) AS s FROM feed"),
  };
}
