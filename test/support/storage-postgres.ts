import pg from "pg";
import { type PgCluster, pgCluster } from "./postgres.js";
import { sessionRecord } from "./session-record.js";

export const session = sessionRecord;

export const at = (n: number) => new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString();
export const ids = (r: { sessions: { id: string }[] }) => r.sessions.map((s) => s.id);

export async function query<R extends pg.QueryResultRow>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

/**
 * storage-postgres on a throwaway cluster the harness starts itself (test/support/postgres.ts): the store's
 * contract, its migrations, and a daemon selecting it with AGENTD_DATABASE_URL or `database.url`.
 */

/** One PostgreSQL cluster for the enclosing describe, started before its first test. */
export function pgClusterFixture() {
  const fx = {} as { cluster: PgCluster };
  before(async () => {
    fx.cluster = await pgCluster();
  });
  return fx;
}
