import type { PoolClient, QueryResultRow } from "pg";
import {
  ApiError,
  directoryRange,
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
import {
  ENTRY_COLS,
  type EntryRaw,
  entryFromRaw,
  LIST_ORDER,
  MESSAGE_COLS,
  type MessageParams,
  type MessageRow,
  messageFromRow,
  messageToParams,
  SESSION_COLS,
  type SessionRow,
  sessionFromRow,
  sessionToParams,
} from "../storage-sqlite/rows.js";
import { causeOf, checkUrl, connectionBroken, redactUrl, SerialConnection } from "./connection.js";
import { PgDocuments } from "./documents.js";
import { Doorbell } from "./doorbell.js";
import { migratePg } from "./migrations.js";
import { PgTurnOwnership } from "./ownership.js";
import { listFilter, pgTerms } from "./search.js";
import { PgSharedEvents } from "./shared-events.js";

const DEFAULT_HIT_LIMIT = 20;
const MAX_HIT_LIMIT = 200;

/** The columns of a session row, in the order of the insert's placeholders. */
const SESSION_FIELDS = [
  "id",
  "title",
  "pinned",
  "persona",
  "model",
  "cwd",
  "mode",
  "is_sandbox",
  "share_token",
  "message_count",
  "usage",
  "meta",
  "created_at",
  "updated_at",
] as const satisfies ReadonlyArray<keyof SessionRow>;

/** The columns of a message row, in the order of the insert's placeholders. */
const MESSAGE_FIELDS = [
  "session_id",
  "seq",
  "role",
  "content",
  "tool_calls",
  "tool_call_id",
  "tool_name",
  "thinking",
  "client_message_id",
  "in_context",
  "created_at",
  "meta",
  "search_text",
  "counts",
] as const satisfies ReadonlyArray<keyof MessageParams>;

type SessionPatch = Partial<Omit<SessionRecord, "id" | "createdAt">>;

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

  constructor(opts: PgStoreOptions) {
    this.ready = this.open(opts);
    // Callers see the failure through their own call; this one only keeps it from being "unhandled".
    this.ready.catch(() => {});
    this.doorbell = new Doorbell({
      client: async () => {
        await this.ready;
        const pg = (await import("pg")).default;
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

  /* ---- sessions ---- */

  async createSession(rec: SessionRecord): Promise<void> {
    const p = sessionToParams(rec);
    await this.run((c) =>
      c.query(
        `INSERT INTO sessions (${SESSION_FIELDS.join(", ")}) VALUES (${placeholders(SESSION_FIELDS.length)})`,
        SESSION_FIELDS.map((f) => text(p[f])),
      ),
    );
  }

  async getSession(id: string): Promise<SessionRecord | undefined> {
    const res = await this.run((c) =>
      c.query<SessionRow>(`SELECT ${SESSION_COLS} FROM sessions s WHERE s.id = $1`, [text(id)]),
    );
    const row = res.rows[0];
    return row ? sessionFromRow(row) : undefined;
  }

  /** Read and written under the row's lock: a concurrent update from another daemon is never half-applied. */
  async updateSession(id: string, patch: SessionPatch): Promise<SessionRecord | undefined> {
    return this.tx(async (c) => {
      const res = await c.query<SessionRow>(`SELECT ${SESSION_COLS} FROM sessions s WHERE s.id = $1 FOR UPDATE`, [
        text(id),
      ]);
      const row = res.rows[0];
      if (!row) return undefined;
      const next: SessionRecord = { ...sessionFromRow(row), ...patch, id };
      if (patch.updatedAt === undefined) next.updatedAt = new Date().toISOString();
      const p = sessionToParams(next);
      const fields = SESSION_FIELDS.filter((f) => f !== "id" && f !== "created_at");
      await c.query(`UPDATE sessions SET ${fields.map((f, i) => `${f} = $${i + 2}`).join(", ")} WHERE id = $1`, [
        text(id),
        ...fields.map((f) => text(p[f])),
      ]);
      return next;
    });
  }

  /** Messages and events go with it (ON DELETE CASCADE). */
  async deleteSession(id: string): Promise<boolean> {
    const res = await this.run((c) => c.query("DELETE FROM sessions WHERE id = $1", [text(id)]));
    return (res.rowCount ?? 0) > 0;
  }

  async findByShareToken(token: string): Promise<SessionRecord | undefined> {
    const res = await this.run((c) =>
      c.query<SessionRow>(`SELECT ${SESSION_COLS} FROM sessions s WHERE s.share_token = $1`, [text(token)]),
    );
    const row = res.rows[0];
    return row ? sessionFromRow(row) : undefined;
  }

  /** The index sessions_cwd answers the three directory queries (see storage-sqlite for their shapes). */
  async sessionsInDirectory(
    dir: string,
    opts: { below: boolean; after?: SessionDirectory; limit: number },
  ): Promise<SessionDirectory[]> {
    const limit = Math.max(1, Math.floor(opts.limit));
    const after = opts.after ?? { cwd: "", id: "" };
    const res = await this.run((c) => {
      if (!opts.below) {
        return c.query<SessionDirectory>(
          `SELECT id, cwd FROM sessions WHERE cwd COLLATE "C" = $1 AND id > $2 ORDER BY id LIMIT $3`,
          [text(dir), text(after.id), limit],
        );
      }
      const { prefix, end } = directoryRange(dir);
      return c.query<SessionDirectory>(
        `SELECT id, cwd FROM sessions
          WHERE cwd COLLATE "C" >= $1 AND cwd COLLATE "C" < $2 AND (cwd = $1 OR cwd COLLATE "C" >= $3)
            AND (cwd COLLATE "C", id) > ($4, $5)
          ORDER BY cwd COLLATE "C", id LIMIT $6`,
        [text(dir), text(end), text(prefix), text(after.cwd), text(after.id), limit],
      );
    });
    return res.rows;
  }

  async usedDirectories(dirs: string[]): Promise<string[]> {
    if (dirs.length === 0) return [];
    const res = await this.run((c) =>
      c.query<{ cwd: string }>(
        `SELECT DISTINCT cwd COLLATE "C" AS cwd FROM sessions WHERE cwd COLLATE "C" = ANY ($1::text[]) ORDER BY 1`,
        [dirs.map(text)],
      ),
    );
    return res.rows.map((r) => r.cwd);
  }

  async distinctDirectories(after: string, limit: number): Promise<string[]> {
    const res = await this.run((c) =>
      c.query<{ cwd: string }>(
        `WITH RECURSIVE d (cwd) AS (
            (SELECT cwd COLLATE "C" FROM sessions WHERE cwd COLLATE "C" > $1 ORDER BY 1 LIMIT 1)
            UNION ALL
            SELECT (SELECT s.cwd COLLATE "C" FROM sessions s WHERE s.cwd COLLATE "C" > d.cwd ORDER BY 1 LIMIT 1)
              FROM d WHERE d.cwd IS NOT NULL
          )
          SELECT cwd FROM d WHERE cwd IS NOT NULL LIMIT $2`,
        [text(after), Math.max(1, Math.floor(limit))],
      ),
    );
    return res.rows.map((r) => r.cwd);
  }

  /**
   * Pinned first, then most recently updated. With `q`, every whitespace-separated term must occur in the title
   * or in some user/assistant message of the session (prefix match on the text-search index).
   */
  async listSessions(query: ListQuery): Promise<{ sessions: SessionRecord[]; total: number }> {
    const { rows, total } = await this.list<SessionRow>(SESSION_COLS, query);
    return { sessions: rows.map(sessionFromRow), total };
  }

  /** Rows as arrays, in the column order `entryFromRaw` reads (shared with storage-sqlite). */
  async listEntries(query: ListQuery): Promise<{ sessions: SessionListEntry[]; total: number }> {
    const { rows, total } = await this.list<EntryRaw>(ENTRY_COLS, query, "array");
    return { sessions: rows.map(entryFromRaw), total };
  }

  private async list<R>(cols: string, query: ListQuery, rowMode?: "array"): Promise<{ rows: R[]; total: number }> {
    const params: unknown[] = [];
    const where = listFilter(pgTerms(query.q), (v) => {
      params.push(v);
      return `$${params.length}`;
    });
    const limit = query.limit !== undefined && query.limit >= 0 ? Math.floor(query.limit) : null;
    const offset = query.offset !== undefined && query.offset > 0 ? Math.floor(query.offset) : 0;
    const n = params.length;
    return this.run(async (c) => {
      const page = await c.query<QueryResultRow>({
        text: `SELECT ${cols} FROM sessions s ${where} ${LIST_ORDER} LIMIT $${n + 1} OFFSET $${n + 2}`,
        values: [...params, limit, offset],
        ...(rowMode ? { rowMode } : {}),
      });
      // Unfiltered, the total is the counter row the inserts and deletes keep (see the migrations).
      const count = await c.query<{ n: string }>(
        where === "" ? "SELECT n FROM session_counter" : `SELECT COUNT(*) AS n FROM sessions s ${where}`,
        params,
      );
      return { rows: page.rows as R[], total: Number(count.rows[0]?.n ?? 0) };
    });
  }

  /* ---- messages ---- */

  /**
   * The seq comes from the session's row, taken under its lock by the UPDATE, in the same statement as the insert:
   * dense and unique even when two daemons append at once.
   */
  async appendMessage(sessionId: string, msg: NewMessage): Promise<StoredMessage> {
    return this.run((c) => insertMessage(c, sessionId, msg, this.turnOwnership.fenceOf(sessionId)));
  }

  async appendMessages(sessionId: string, msgs: NewMessage[]): Promise<void> {
    if (msgs.length === 0) return;
    await this.tx(async (c) => {
      for (const m of msgs) await insertMessage(c, sessionId, m, this.turnOwnership.fenceOf(sessionId));
    });
  }

  /** `turns` below 1 (or not finite) means the whole history before `beforeSeq`. */
  async historyPage(sessionId: string, turns: number, beforeSeq?: number): Promise<HistoryPage> {
    const bound = beforeSeq ?? Number.MAX_SAFE_INTEGER;
    const id = text(sessionId);
    return this.run(async (c) => {
      let start = 0;
      if (Number.isFinite(turns) && turns >= 1) {
        const nth = await c.query<{ seq: number }>(
          `SELECT seq FROM messages WHERE session_id = $1 AND seq < $2 AND role = 'user'
            ORDER BY seq DESC LIMIT 1 OFFSET $3`,
          [id, bound, Math.floor(turns) - 1],
        );
        start = nth.rows[0]?.seq ?? 0;
      }
      const range = await c.query<MessageRow>(
        `SELECT ${MESSAGE_COLS} FROM messages WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`,
        [id, start, bound],
      );
      const messages = range.rows.map(messageFromRow);
      const first = messages[0];
      if (!first) return { messages, oldestSeq: null, hasMoreHistory: false };
      const before = await c.query("SELECT 1 FROM messages WHERE session_id = $1 AND seq < $2 LIMIT 1", [
        id,
        first.seq,
      ]);
      return { messages, oldestSeq: first.seq, hasMoreHistory: (before.rowCount ?? 0) > 0 };
    });
  }

  async readMessages(sessionId: string, afterSeq: number, limit: number): Promise<StoredMessage[]> {
    const res = await this.run((c) =>
      c.query<MessageRow>(
        `SELECT ${MESSAGE_COLS} FROM messages WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
        [text(sessionId), afterSeq, Math.max(1, Math.floor(limit))],
      ),
    );
    return res.rows.map(messageFromRow);
  }

  async contextMessages(sessionId: string): Promise<StoredMessage[]> {
    const res = await this.run((c) =>
      c.query<MessageRow>(
        `SELECT ${MESSAGE_COLS} FROM messages WHERE session_id = $1 AND in_context = 1 ORDER BY seq`,
        [text(sessionId)],
      ),
    );
    return res.rows.map(messageFromRow);
  }

  async markOutOfContext(sessionId: string, uptoSeq?: number): Promise<void> {
    await this.run((c) =>
      c.query("UPDATE messages SET in_context = 0 WHERE session_id = $1 AND seq <= $2 AND in_context = 1", [
        text(sessionId),
        uptoSeq ?? Number.MAX_SAFE_INTEGER,
      ]),
    );
  }

  /** The seq counter is kept: a seq that was undone is never handed out again (clients may still show it). */
  async truncateMessages(sessionId: string, fromSeq: number): Promise<void> {
    const id = text(sessionId);
    await this.tx(async (c) => {
      await c.query("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", [id]);
      await c.query("DELETE FROM messages WHERE session_id = $1 AND seq >= $2", [id, fromSeq]);
      await c.query(
        `UPDATE sessions SET message_count =
          (SELECT COALESCE(SUM(counts), 0) FROM messages WHERE session_id = sessions.id) WHERE id = $1`,
        [id],
      );
    });
  }

  async hasClientMessageId(sessionId: string, clientMessageId: string): Promise<boolean> {
    const res = await this.run((c) =>
      c.query("SELECT 1 FROM messages WHERE session_id = $1 AND client_message_id = $2 LIMIT 1", [
        text(sessionId),
        text(clientMessageId),
      ]),
    );
    return (res.rowCount ?? 0) > 0;
  }

  /** All terms must occur in the same message (prefix match), newest first; blank queries find nothing. */
  async searchMessages(
    query: string,
    opts: { sessionId?: string; excludeSessionId?: string; limit?: number } = {},
  ): Promise<MessageHit[]> {
    const terms = pgTerms(query)
      .map((t) => t.text)
      .filter((t): t is string => t !== null);
    if (terms.length === 0) return [];
    const limit = Math.min(Math.max(Math.floor(opts.limit ?? DEFAULT_HIT_LIMIT), 1), MAX_HIT_LIMIT);
    const tsq = terms.map((_, i) => `agentd_prefix_query($${i + 4})`).join(" && ");
    const res = await this.run((c) =>
      c.query<MessageHit>(
        `WITH q AS (SELECT ${tsq} AS query)
        SELECT m.session_id AS "sessionId", s.title AS "sessionTitle", m.seq AS seq, m.role AS role,
          ts_headline('agentd_search', m.search_text, q.query,
            'StartSel="", StopSel="", MaxWords=16, MinWords=8, ShortWord=0, FragmentDelimiter=" … ", MaxFragments=1')
            AS snippet,
          m.created_at AS "createdAt"
        FROM q, messages m JOIN sessions s ON s.id = m.session_id
        WHERE m.search @@ q.query
          AND ($1::text IS NULL OR m.session_id = $1)
          AND ($2::text IS NULL OR m.session_id <> $2)
        ORDER BY m.id DESC LIMIT $3`,
        [opts.sessionId ?? null, opts.excludeSessionId ?? null, limit, ...terms.map(text)],
      ),
    );
    return res.rows;
  }

  /* ---- events ---- */

  /** Duplicate seqs are ignored: a batch retried after a partial failure must not fail again. */
  async appendEvents(sessionId: string, events: EventToAppend[]): Promise<void> {
    if (events.length === 0) return;
    await this.run((c) => insertEvents(c, sessionId, events));
  }

  async readEvents(
    sessionId: string,
    afterSeq: number,
    limit: number,
    opts?: { durableOnly?: boolean },
  ): Promise<StoredEvent[]> {
    if (!(limit > 0)) return [];
    const durable = opts?.durableOnly ? "AND ephemeral = 0" : "";
    const res = await this.run((c) =>
      c.query<StoredEvent>(
        `SELECT seq, ts, type, json FROM events WHERE session_id = $1 AND seq > $2 ${durable} ORDER BY seq LIMIT $3`,
        [text(sessionId), afterSeq, Math.floor(limit)],
      ),
    );
    return res.rows;
  }

  /** 0 for an unknown session, like a session that has no events yet. */
  async eventSeqReserved(sessionId: string): Promise<number> {
    const res = await this.run((c) =>
      c.query<{ r: number }>("SELECT event_seq_reserved AS r FROM sessions WHERE id = $1", [text(sessionId)]),
    );
    return res.rows[0]?.r ?? 0;
  }

  /** A no-op for an unknown session (deleted while its log still held a reservation). */
  async reserveEventSeq(sessionId: string, upTo: number): Promise<void> {
    await this.run((c) =>
      c.query("UPDATE sessions SET event_seq_reserved = $1 WHERE id = $2", [upTo, text(sessionId)]),
    );
  }

  /* ---- feed ---- */

  async appendFeed(event: FeedEventToAppend): Promise<void> {
    await this.run((c) => insertFeed(c, [event]));
  }

  async readFeed(afterSeq: number, limit: number): Promise<StoredEvent[]> {
    if (!(limit > 0)) return [];
    const res = await this.run((c) =>
      c.query<StoredEvent>("SELECT seq, ts, type, json FROM feed WHERE seq > $1 ORDER BY seq LIMIT $2", [
        afterSeq,
        Math.floor(limit),
      ]),
    );
    return res.rows;
  }

  async feedSeq(): Promise<number> {
    const res = await this.run((c) => c.query<{ s: number | null }>("SELECT MAX(seq) AS s FROM feed"));
    return res.rows[0]?.s ?? 0;
  }

  /** The event log's flush: every session's pending events and the feed's, in one transaction. */
  async appendBatch(batch: EventBatch): Promise<void> {
    await this.tx(async (c) => {
      for (const s of batch.sessions) if (s.events.length > 0) await insertEvents(c, s.sessionId, s.events);
      if (batch.feed.length > 0) await insertFeed(c, batch.feed);
    });
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

/** `fence`: the turn lease this daemon holds (or lost) for the session; a stale one refuses the message. */
async function insertMessage(
  c: PoolClient,
  sessionId: string,
  msg: NewMessage,
  fence: number | undefined,
): Promise<StoredMessage> {
  const now = new Date().toISOString();
  // seq 0 is a placeholder: the statement takes the next one from the session row.
  const p = messageToParams(sessionId, 0, msg.createdAt ?? now, msg);
  const fields = MESSAGE_FIELDS.filter((f) => f !== "session_id" && f !== "seq");
  const values = fields.map((f) => text(p[f]));
  const res = await c.query<{ seq: number }>(
    `WITH s AS (
      UPDATE sessions SET msg_seq = msg_seq + 1, message_count = message_count + $2, updated_at = $3
      WHERE id = $1 AND ($${fields.length + 4}::bigint IS NULL
        OR EXISTS (SELECT 1 FROM turn_leases l WHERE l.session_id = $1 AND l.fence = $${fields.length + 4}))
      RETURNING id, msg_seq
    )
    INSERT INTO messages (session_id, seq, ${fields.join(", ")})
      SELECT s.id, s.msg_seq, ${fields.map((_, i) => `$${i + 4}`).join(", ")} FROM s
    RETURNING seq`,
    [text(sessionId), p.counts, now, ...values, fence ?? null],
  );
  const seq = res.rows[0]?.seq;
  if (seq === undefined && fence !== undefined) {
    throw ApiError.conflict("This daemon no longer owns the session's turn: another daemon took it over");
  }
  if (seq === undefined) throw ApiError.notFound(`Session not found: ${sessionId}`);
  return messageFromRow({ ...p, seq });
}

async function insertEvents(c: PoolClient, sessionId: string, events: EventToAppend[]): Promise<void> {
  await c.query(
    `INSERT INTO events (session_id, seq, ts, type, json, ephemeral)
      SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::int[])
    ON CONFLICT DO NOTHING`,
    [
      text(sessionId),
      events.map((e) => e.seq),
      events.map((e) => e.ts),
      events.map((e) => text(e.type)),
      events.map((e) => text(e.json)),
      events.map((e) => (e.ephemeral ? 1 : 0)),
    ],
  );
}

async function insertFeed(c: PoolClient, feed: FeedEventToAppend[]): Promise<void> {
  await c.query(
    `INSERT INTO feed (seq, ts, type, json)
      SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])
    ON CONFLICT DO NOTHING`,
    [feed.map((e) => e.seq), feed.map((e) => e.ts), feed.map((e) => text(e.type)), feed.map((e) => text(e.json))],
  );
}

function placeholders(n: number): string {
  return Array.from({ length: n }, (_, i) => `$${i + 1}`).join(", ");
}

/**
 * PostgreSQL text cannot hold U+0000. JSON columns never contain one (JSON.stringify escapes it); free text that
 * does (a title, a model's thinking) keeps everything else, the NUL shown as U+FFFD.
 */
function text<V>(v: V): V {
  return typeof v === "string" && v.includes("\0") ? (v.replaceAll("\0", "\uFFFD") as V) : v;
}
