import { definePlugin, SessionStoreToken, T } from "../../core/index.js";
import { PostgresSessionStore } from "./store.js";

export { redactUrl } from "./connection.js";
export { PG_MIGRATIONS, PG_SCHEMA_VERSION } from "./migrations.js";
export { PostgresSessionStore } from "./store.js";

/**
 * Sessions, messages, events and the feed in PostgreSQL. The host loads it in place of `storage-sqlite` when
 * `AGENTD_DATABASE_URL` or the config key `database.url` names a database (and passes the URL as its option).
 */
export default definePlugin({
  manifest: {
    id: "storage-postgres",
    version: "1.0.0",
    description: "Sessions, message history, events and full-text search in PostgreSQL (database.url)",
    provides: [SessionStoreToken.id],
    capabilities: ["storage", "network"],
    configSchema: T.Object(
      {
        url: T.String({ minLength: 1 }),
        daemonId: T.Optional(T.String({ minLength: 1 })),
        version: T.Optional(T.String()),
        leaseTimeoutMs: T.Optional(T.Integer({ minimum: 300 })),
      },
      { additionalProperties: false },
    ),
  },
  deps: {},
  register(ctx) {
    const store = new PostgresSessionStore({
      url: ctx.options.url,
      daemonId: ctx.options.daemonId,
      version: ctx.options.version,
      leaseTimeoutMs: ctx.options.leaseTimeoutMs,
      onTeamError: (err, what) => ctx.log.warn({ reason: err.message }, what),
      onIdleError: (err) => ctx.log.warn({ reason: err.message }, "the database connection was lost; reconnecting"),
      onListenError: (err) =>
        ctx.log.warn({ reason: err.message }, "the database's listening connection was lost; listening again"),
    });
    ctx.services.provide(SessionStoreToken, store);
    ctx.onDispose(() => void store.close());
  },
});
