import { join } from "node:path";
import { definePlugin, SessionStoreToken } from "../../core/index.js";
import { createSessionHistoryTool } from "./history-tool.js";
import { createMemoryTool } from "./memory-tool.js";
import { MemoryStore } from "./store.js";

export { createSessionHistoryTool, type SessionHistorySource } from "./history-tool.js";
export { createMemoryTool } from "./memory-tool.js";
export { type MemoryNote, type MemoryScope, MemoryStore, toFtsQuery } from "./store.js";

/**
 * memory (the agent's own notes, in `<plugin data dir>/memory.db`) and session_history (search over earlier
 * sessions through the session store). Both are read-only tools in the scheduling sense: memory writes are
 * single SQLite statements, safe when several calls of one message run concurrently.
 */
export default definePlugin({
  manifest: {
    id: "tools-memory",
    version: "1.0.0",
    description: "memory (notes across sessions) and session_history (search earlier sessions)",
    capabilities: ["storage"],
  },
  deps: {
    store: SessionStoreToken,
  },
  register(ctx) {
    let store: MemoryStore | undefined;
    ctx.onDispose(() => {
      store?.close();
      store = undefined;
    });
    ctx.tools.add(createMemoryTool(() => (store ??= MemoryStore.open(join(ctx.dataDir(), "memory.db")))));
    ctx.tools.add(createSessionHistoryTool(() => ctx.deps.store));
  },
});
