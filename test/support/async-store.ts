import { join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { definePlugin, type SessionStore, SessionStoreToken, T } from "../../core/index.js";
import { openSqliteStore, type SqliteSessionStore } from "../../plugins/storage-sqlite/index.js";

/**
 * A deliberately asynchronous session store, for proving that nothing in the daemon assumes a write completes in
 * the same tick (`npm run test:async-store` runs the black-box suite on it; `AGENTD_TEST_STORE` names this module).
 *
 * Every call answers with a promise that settles on a later turn of the event loop, never synchronously, in the
 * order the calls were made (what one connection to a network database gives), and every record it returns is a
 * copy of its own. The data is held in memory: an in-memory SQLite database per daemon home (so the semantics are
 * those of the real store), kept in this process across daemon restarts like a database server would be. With the
 * option `file` (a daemon in a child process, killed and restarted by a test) it is a database file in the home.
 */
const servers = new Map<string, SqliteSessionStore>();

/** The SessionStore methods (the contract), and nothing else of the SQLite store. */
const METHODS = [
  "createSession",
  "getSession",
  "updateSession",
  "deleteSession",
  "listSessions",
  "listEntries",
  "sessionsInDirectory",
  "usedDirectories",
  "distinctDirectories",
  "findByShareToken",
  "appendMessage",
  "appendMessages",
  "historyPage",
  "readMessages",
  "contextMessages",
  "markOutOfContext",
  "truncateMessages",
  "hasClientMessageId",
  "searchMessages",
  "appendEvents",
  "readEvents",
  "eventSeqReserved",
  "reserveEventSeq",
  "appendFeed",
  "readFeed",
  "feedSeq",
  "appendBatch",
] as const satisfies ReadonlyArray<keyof SessionStore>;

export function asyncStore(server: SqliteSessionStore): SessionStore {
  let tail: Promise<unknown> = Promise.resolve();
  const call = (method: (typeof METHODS)[number], args: unknown[]): Promise<unknown> => {
    const result = tail.then(async () => {
      await nextTurn();
      const fn = server[method] as (...a: unknown[]) => unknown;
      // The server's own promise (a durable write) settles first.
      const value = await fn.apply(server, args);
      return value === undefined ? undefined : structuredClone(value);
    });
    tail = result.catch(() => {});
    return result;
  };
  const store: Record<string, unknown> = { close: () => tail.then(() => undefined) };
  for (const m of METHODS) store[m] = (...args: unknown[]) => call(m, args);
  return store as unknown as SessionStore;
}

export default definePlugin({
  manifest: {
    id: "storage-async-memory",
    version: "1.0.0",
    description: "Test store: in memory, every call answered asynchronously",
    provides: [SessionStoreToken.id],
    capabilities: ["storage"],
    configSchema: T.Object(
      { file: T.Optional(T.String({ pattern: "^[a-z0-9.-]+$" })) },
      { additionalProperties: false },
    ),
  },
  register(ctx) {
    const file = ctx.options.file;
    if (file) {
      const server = openSqliteStore(join(ctx.home, file));
      ctx.onDispose(() => server.close());
      ctx.services.provide(SessionStoreToken, asyncStore(server));
      return;
    }
    let server = servers.get(ctx.home);
    if (!server) {
      server = openSqliteStore(":memory:");
      servers.set(ctx.home, server);
    }
    ctx.services.provide(SessionStoreToken, asyncStore(server));
  },
});
