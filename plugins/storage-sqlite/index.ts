import { join } from "node:path";
import { definePlugin, SessionStoreToken } from "../../core/index.js";
import { openSqliteStore } from "./store.js";

export { MIGRATIONS, SCHEMA_VERSION } from "./migrations.js";
export { openSqliteStore, SqliteSessionStore } from "./store.js";

/**
 * The built-in session store: `<home>/agentd.db`. Another storage plugin (one that provides the session store) may
 * take its place: list `storage-sqlite` in `disabledPlugins`.
 */
export default definePlugin({
  manifest: {
    id: "storage-sqlite",
    version: "1.0.0",
    description: "Sessions, message history, events and full-text search in SQLite (<home>/agentd.db)",
    provides: [SessionStoreToken.id],
    capabilities: ["storage"],
  },
  deps: {},
  register(ctx) {
    const store = openSqliteStore(join(ctx.home, "agentd.db"));
    ctx.services.provide(SessionStoreToken, store);
    ctx.onDispose(() => store.close());
  },
});
