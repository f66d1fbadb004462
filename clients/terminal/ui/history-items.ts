/** A session's stored messages as transcript items (opening a session, and redrawing it after a rewind). */
import { toolError, toolLine } from "../format.js";
import type { NewItem } from "./store.js";

/** A message of the session's history as the daemon shows it. */
export interface ShownMessage {
  role: string;
  content: string | null;
  thinking?: string;
  toolCalls?: Array<{ name: string; args: string; status: string; result: string }>;
}

export function messageItems(messages: ShownMessage[]): NewItem[] {
  const out: NewItem[] = [];
  for (const m of messages) {
    if (m.role === "user") out.push({ kind: "user", text: m.content ?? "" });
    else if (m.role === "assistant") {
      if (m.thinking?.trim()) out.push({ kind: "thinking", text: m.thinking.trim() });
      if (m.content?.trim()) out.push({ kind: "assistant", text: m.content.trim() });
      for (const t of m.toolCalls ?? []) {
        const failed = t.status === "error";
        out.push({
          kind: "tool",
          line: toolLine(t.name, t.args),
          status: failed ? "error" : "ok",
          detail: failed ? toolError({ content: t.result }) : undefined,
        });
      }
    } else if (m.content) out.push({ kind: "note", text: m.content, tone: m.role === "warning" ? "warn" : "dim" });
  }
  return out;
}
