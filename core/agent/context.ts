import type { ChatMessage } from "../contributions.js";
import type { StoredMessage } from "../session-types.js";

/** Rough token estimate (≈3.8 characters per token) used between provider usage reports. */
export function estimateTokens(messages: ChatMessage[]): number {
  let chars = 0;
  for (const m of messages) {
    if (typeof m.content === "string") chars += m.content.length;
    else if (Array.isArray(m.content)) {
      for (const p of m.content) chars += p.type === "text" ? p.text.length : 1000;
    }
    for (const tc of m.tool_calls ?? []) chars += tc.function.name.length + tc.function.arguments.length;
  }
  return Math.ceil(chars / 3.8);
}

/**
 * Turns stored in-context rows into the provider's message list. Repairs what a crash or an abort can leave
 * behind: tool calls without results get an "interrupted" result so the history stays valid for every provider.
 * Images returned by tools travel in a user message after the tool results (tool messages cannot carry images).
 */
export function toProviderMessages(system: string, rows: StoredMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [{ role: "system", content: system }];
  let open: { ids: string[]; answered: Set<string>; images: ChatMessage[] } | undefined;
  const closeOpen = () => {
    if (!open) return;
    for (const id of open.ids) {
      if (!open.answered.has(id)) {
        out.push({ role: "tool", tool_call_id: id, content: "[interrupted] The tool call did not complete." });
      }
    }
    out.push(...open.images);
    open = undefined;
  };
  for (const row of rows) {
    if (row.role === "system") continue;
    if (row.role === "tool") {
      if (!open || !row.toolCallId || !open.ids.includes(row.toolCallId) || open.answered.has(row.toolCallId)) continue;
      open.answered.add(row.toolCallId);
      if (Array.isArray(row.content)) {
        const text = row.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n");
        const images = row.content.filter((p) => p.type === "image_url");
        out.push({ role: "tool", tool_call_id: row.toolCallId, content: text });
        if (images.length) {
          open.images.push({
            role: "user",
            content: [{ type: "text", text: `[images returned by ${row.toolName ?? "a tool"}]` }, ...images],
          });
        }
      } else {
        out.push({ role: "tool", tool_call_id: row.toolCallId, content: row.content ?? "" });
      }
      continue;
    }
    closeOpen();
    if (row.role === "assistant") {
      const msg: ChatMessage = { role: "assistant", content: typeof row.content === "string" ? row.content : "" };
      if (row.toolCalls?.length) {
        msg.tool_calls = row.toolCalls.map((tc) => ({
          id: tc.id,
          type: "function" as const,
          function: { name: tc.name, arguments: tc.arguments },
        }));
        open = { ids: row.toolCalls.map((tc) => tc.id), answered: new Set(), images: [] };
      }
      out.push(msg);
    } else {
      out.push({ role: "user", content: row.content ?? "" });
    }
  }
  closeOpen();
  return out;
}
