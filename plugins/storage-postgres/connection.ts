import { createRequire } from "node:module";
import type { Pool, PoolClient, PoolConfig } from "pg";
import { ApiError } from "../../core/index.js";

/** The URL as it may be shown: the password replaced by `***` (also a `password=` query parameter). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    if (u.searchParams.has("password")) u.searchParams.set("password", "***");
    return u.toString().replace("password=%2A%2A%2A", "password=***");
  } catch {
    // Not a URL at all: show its scheme-less shape without anything that could be a secret.
    return url.replace(/:[^:@/]*@/, ":***@");
  }
}

/** A check of the URL before any connection: the scheme, and a database name. */
export function checkUrl(url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error("not a URL (expected postgres://user:password@host:port/database)");
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") {
    throw new Error(`the scheme must be postgres:// or postgresql://, not ${u.protocol}//`);
  }
}

/** The cause of a failed connection or query, in words: node-postgres errors carry a code, network errors a syscall. */
export function causeOf(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return causeOf(err.errors[0]);
  if (err instanceof Error) return err.message || (err as NodeJS.ErrnoException).code || err.name;
  return String(err);
}

/**
 * Whether an error may have left the connection unusable: anything but a statement the server refused (a SQLSTATE
 * outside the connection-exception and operator-intervention classes) or an error of the store's own making.
 */
export function connectionBroken(err: unknown): boolean {
  if (err instanceof ApiError) return false;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return /^(08|57)/.test(code);
  return true;
}

/**
 * node-postgres (CommonJS), required only once a store opens a database: the bundled daemon has no `import()` of its
 * own (core/import-module.ts).
 */
export function loadPg(): typeof import("pg") {
  return createRequire(import.meta.url)("pg") as typeof import("pg");
}

/**
 * One connection to the database that runs the store's calls one at a time, in the order they were made (what the
 * SessionStore contract asks: a read sees every write issued before it). The pool of one connection reconnects
 * by itself after the server went away: a call made meanwhile fails, the next one opens a new connection.
 */
export class SerialConnection {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly pool: Pool) {}

  static async open(url: string, onIdleError: (err: Error) => void): Promise<SerialConnection> {
    const pg = loadPg();
    const config: PoolConfig = {
      connectionString: url,
      max: 1,
      idleTimeoutMillis: 0,
      connectionTimeoutMillis: 10_000,
      // BIGINT (seq numbers, counts) as numbers: every value the store keeps is far below 2^53.
      types: {
        getTypeParser: ((oid: number, format?: "text" | "binary") =>
          oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as never,
      },
    };
    const pool = new pg.Pool(config);
    // A connection that fails while idle (the server restarted) is dropped by the pool; without a listener the
    // error would end the process.
    pool.on("error", onIdleError);
    return new SerialConnection(pool);
  }

  /** Runs `fn` with the connection to itself, after every call made before it. */
  run<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    const result = this.tail.then(async () => {
      const client = await this.pool.connect();
      // The pool listens for errors of idle connections only: one that fails between two statements of `fn` (the
      // server shut down) must not be an uncaught error; its next statement fails and the connection is dropped.
      let lost: Error | undefined;
      const onError = (err: Error) => {
        lost = err;
      };
      client.on("error", onError);
      try {
        const value = await fn(client);
        client.off("error", onError);
        client.release(lost);
        return value;
      } catch (err) {
        client.off("error", onError);
        // A broken connection must not go back to the pool; one that only refused a statement may.
        client.release(lost ?? (connectionBroken(err) ? (err as Error) : undefined));
        throw err;
      }
    });
    this.tail = result.catch(() => {});
    return result;
  }

  /** `fn` inside BEGIN ... COMMIT (rolled back when it throws). */
  transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.run(async (client) => {
      await client.query("BEGIN");
      try {
        const value = await fn(client);
        await client.query("COMMIT");
        return value;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      }
    });
  }

  async close(): Promise<void> {
    await this.tail;
    await this.pool.end();
  }
}
