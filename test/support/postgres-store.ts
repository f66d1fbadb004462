import { definePlugin, SessionStoreToken } from "../../core/index.js";
import { PostgresSessionStore } from "../../plugins/storage-postgres/index.js";
import { pgCluster } from "./postgres.js";

/**
 * The PostgreSQL store for a whole black-box run (`AGENTD_TEST_STORE=dist/test/support/postgres-store.js`): every
 * daemon of the run keeps its sessions in a database of its own on the run's throwaway cluster (test/support/
 * postgres.ts), and a daemon restarted on the same home finds its database again, like a server would keep it.
 */
const databases = new Map<string, Promise<string>>();

export default definePlugin({
  manifest: {
    id: "storage-postgres-test",
    version: "1.0.0",
    description: "Test store: the storage-postgres store on a database of its own on the test cluster",
    provides: [SessionStoreToken.id],
    capabilities: ["storage", "network"],
  },
  register(ctx) {
    let url = databases.get(ctx.home);
    if (!url) {
      url = pgCluster().then((c) => c.createDatabase(undefined, { migrated: true }));
      databases.set(ctx.home, url);
    }
    // The documents stay files in the home: the suite's file tests hold on every store; test/team-documents proves
    // them in the database.
    const store = new PostgresSessionStore({ url, documents: false });
    ctx.services.provide(SessionStoreToken, store);
    ctx.onDispose(() => void store.close());
  },
});
