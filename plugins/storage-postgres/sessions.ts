import type { QueryResultRow } from "pg";
import {
  directoryRange,
  type ListQuery,
  type SessionDirectory,
  type SessionListEntry,
  type SessionRecord,
} from "../../core/index.js";
import {
  ENTRY_COLS,
  type EntryRaw,
  entryFromRaw,
  LIST_ORDER,
  SESSION_COLS,
  type SessionRow,
  sessionFromRow,
  sessionToParams,
} from "../storage-sqlite/rows.js";
import { countSql, listFilter, pgTerms } from "./search.js";
import { placeholders, type Runner, text } from "./sql.js";

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

export type SessionPatch = Partial<Omit<SessionRecord, "id" | "createdAt">>;

/** The `sessions` table: a session's row, the directory queries and the listing with its search. */
export class PgSessions {
  constructor(
    private readonly run: Runner,
    private readonly tx: Runner,
  ) {}

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
    const terms = pgTerms(query.q);
    const where = listFilter(terms, (v) => {
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
        where === "" ? "SELECT n FROM session_counter" : countSql(terms, where),
        params,
      );
      return { rows: page.rows as R[], total: Number(count.rows[0]?.n ?? 0) };
    });
  }
}
