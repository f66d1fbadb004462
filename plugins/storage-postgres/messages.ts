import type { PoolClient } from "pg";
import { ApiError, type HistoryPage, type MessageHit, type NewMessage, type StoredMessage } from "../../core/index.js";
import {
  MESSAGE_COLS,
  type MessageParams,
  type MessageRow,
  messageFromRow,
  messageToParams,
} from "../storage-sqlite/rows.js";
import { pgTerms } from "./search.js";
import { type Runner, text } from "./sql.js";

const DEFAULT_HIT_LIMIT = 20;
const MAX_HIT_LIMIT = 200;

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

/** The `messages` table: appends (fenced by the turn's lease), history pages, the working set and the search. */
export class PgMessages {
  constructor(
    private readonly run: Runner,
    private readonly tx: Runner,
    /** The turn lease this daemon holds (or lost) for the session, if any. */
    private readonly fenceOf: (sessionId: string) => number | undefined,
  ) {}

  /**
   * The seq comes from the session's row, taken under its lock by the UPDATE, in the same statement as the insert:
   * dense and unique even when two daemons append at once.
   */
  async appendMessage(sessionId: string, msg: NewMessage): Promise<StoredMessage> {
    return this.run((c) => insertMessage(c, sessionId, msg, this.fenceOf(sessionId)));
  }

  async appendMessages(sessionId: string, msgs: NewMessage[]): Promise<void> {
    if (msgs.length === 0) return;
    await this.tx(async (c) => {
      for (const m of msgs) await insertMessage(c, sessionId, m, this.fenceOf(sessionId));
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
