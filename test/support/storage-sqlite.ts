import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionRecord } from "../../core/session-types.js";
import type { SessionStore } from "../../core/store.js";
import { openSqliteStore, type SqliteSessionStore } from "../../plugins/storage-sqlite/store.js";
import { sessionRecord } from "./session-record.js";

export const session = sessionRecord;

export const at = (n: number) => new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString();
export const ids = (r: { sessions: SessionRecord[] }) => r.sessions.map((s) => s.id);
export const texts = (ms: { content: unknown }[]) => ms.map((m) => m.content);

/** A session with `turns` user/assistant exchanges, each with a tool step in between. */
export function seedTurns(store: SessionStore, id: string, turns: number): void {
  for (let i = 0; i < turns; i++) {
    store.appendMessage(id, { role: "user", content: `q${i}` });
    store.appendMessage(id, {
      role: "assistant",
      content: null,
      toolCalls: [{ id: `c${i}`, name: "ls", arguments: "{}" }],
    });
    store.appendMessage(id, { role: "tool", content: "out", toolCallId: `c${i}`, toolName: "ls" });
    store.appendMessage(id, { role: "assistant", content: `a${i}` });
  }
}

/** A fresh SQLite store in a temporary directory for each test of the enclosing describe. */
export function sqliteStoreFixture() {
  const fx = {} as { dir: string; file: string; store: SqliteSessionStore };
  beforeEach(() => {
    fx.dir = mkdtempSync(join(tmpdir(), "agentd-sqlite-"));
    fx.file = join(fx.dir, "agentd.db");
    fx.store = openSqliteStore(fx.file);
  });
  afterEach(() => {
    fx.store.close();
    rmSync(fx.dir, { recursive: true, force: true });
  });
  return fx;
}
