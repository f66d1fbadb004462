import { emptyUsage, type SessionRecord } from "../../core/session-types.js";

/** A session record as a store keeps it, with test defaults (store-level tests). */
export function sessionRecord(id: string, over: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    title: null,
    pinned: false,
    persona: "default",
    model: "m",
    cwd: "/tmp",
    mode: "build",
    isSandbox: false,
    shareToken: null,
    messageCount: 0,
    usage: emptyUsage(),
    createdAt: "2024-01-01T00:00:00.000Z",
    updatedAt: "2024-01-01T00:00:00.000Z",
    meta: {},
    ...over,
  };
}
