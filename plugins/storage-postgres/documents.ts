import type { PoolClient } from "pg";
import { type Disposable, type DocumentStore, toDisposable } from "../../core/index.js";
import type { Doorbell } from "./doorbell.js";

/** The doorbell's channel for documents: the payload is the changed document's name. */
export const DOCUMENTS_CHANNEL = "agentd_documents";

/**
 * The daemon's documents (settings, approval rules, trust decisions) in the `documents` table, shared by every
 * daemon on the database. A change is one transaction under the document's advisory lock, so two daemons changing
 * one document at once both keep their change; the commit rings the other daemons, which read it again.
 */
export class PgDocuments implements DocumentStore {
  constructor(
    private readonly url: () => string,
    private readonly tx: <T>(fn: (c: PoolClient) => Promise<T>) => Promise<T>,
    private readonly run: <T>(fn: (c: PoolClient) => Promise<T>) => Promise<T>,
    private readonly doorbell: Doorbell,
    private readonly clean: (s: string) => string,
  ) {}

  /** The database, as it may be shown (password redacted). */
  get where(): string {
    return this.url();
  }

  async read(name: string): Promise<string | undefined> {
    const res = await this.run((c) => c.query<{ body: string }>("SELECT body FROM documents WHERE name = $1", [name]));
    return res.rows[0]?.body;
  }

  update(name: string, edit: (current: string | undefined) => string | undefined): Promise<string | undefined> {
    return this.tx(async (c) => {
      await c.query("SELECT pg_advisory_xact_lock(hashtext('agentd-document'), hashtext($1))", [name]);
      const res = await c.query<{ body: string }>("SELECT body FROM documents WHERE name = $1", [name]);
      const current = res.rows[0]?.body;
      const next = edit(current);
      if (next === undefined || next === current) return current;
      await c.query(
        `INSERT INTO documents (name, body, updated_at) VALUES ($1, $2, now())
         ON CONFLICT (name) DO UPDATE SET body = EXCLUDED.body, updated_at = EXCLUDED.updated_at`,
        [name, this.clean(next)],
      );
      await c.query(`SELECT pg_notify('${DOCUMENTS_CHANNEL}', $1)`, [name]);
      return next;
    });
  }

  watch(fn: (name: string | undefined) => void): Disposable {
    const ring = {
      channel: DOCUMENTS_CHANNEL,
      payload: (name: string | undefined) => {
        if (name) fn(name);
      },
      reconnected: () => fn(undefined), // away for a while: any document may have changed
    };
    this.doorbell.subscribe(ring).catch(() => {}); // a lost listener is reported by the doorbell and retried
    return toDisposable(() => this.doorbell.unsubscribe(ring));
  }
}
