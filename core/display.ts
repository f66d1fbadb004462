import type { StoredMessage } from "./session-types.js";

export interface DisplayToolCall {
  id: string;
  name: string;
  args: string;
  status: "ok" | "error" | "running";
  result: string;
  error?: unknown;
  images?: string[];
}

export interface DisplayMessage {
  role: "system" | "user" | "assistant" | "warning";
  content: string | null;
  seq?: number;
  clientMessageId?: string;
  toolCalls?: DisplayToolCall[];
  thinking?: string;
  turnMeta?: unknown;
  images?: string[];
}

/** `<prefix>/sessions/<id>/image?seq=&idx=` for images persisted with a message. */
export function imageUrl(apiBase: string, sessionId: string, seq: number, idx: number): string {
  return `${apiBase}/sessions/${encodeURIComponent(sessionId)}/image?seq=${seq}&idx=${idx}`;
}

/**
 * Turns stored rows into what clients render: tool results folded into the assistant message that called them,
 * images replaced by URLs. Role "tool" rows are never emitted on their own.
 */
export function toDisplayMessages(rows: StoredMessage[], sessionId: string, apiBase: string): DisplayMessage[] {
  const out: DisplayMessage[] = [];
  const callIndex = new Map<string, DisplayToolCall>();
  for (const row of rows) {
    if (row.role === "tool") {
      const call = row.toolCallId ? callIndex.get(row.toolCallId) : undefined;
      if (call) {
        call.result = typeof row.content === "string" ? row.content : JSON.stringify(row.content);
        call.status = row.meta?.isError ? "error" : "ok";
        if (row.meta?.error) call.error = row.meta.error;
        const imgs = row.meta?.imageCount;
        if (typeof imgs === "number" && imgs > 0) {
          call.images = Array.from({ length: imgs }, (_, i) => imageUrl(apiBase, sessionId, row.seq, i));
        }
      }
      continue;
    }
    const msg: DisplayMessage = { role: row.role, content: null, seq: row.seq };
    if (Array.isArray(row.content)) {
      const texts: string[] = [];
      const images: string[] = [];
      for (const part of row.content) {
        if (part.type === "text") texts.push(part.text);
        else images.push(imageUrl(apiBase, sessionId, row.seq, images.length));
      }
      msg.content = texts.join("\n");
      if (images.length) msg.images = images;
    } else {
      msg.content = row.content;
    }
    if (row.clientMessageId) msg.clientMessageId = row.clientMessageId;
    if (row.thinking) msg.thinking = row.thinking;
    if (row.meta?.turnMeta) msg.turnMeta = row.meta.turnMeta;
    if (row.toolCalls?.length) {
      msg.toolCalls = row.toolCalls.map((tc) => {
        const call: DisplayToolCall = { id: tc.id, name: tc.name, args: tc.arguments, status: "running", result: "" };
        callIndex.set(tc.id, call);
        return call;
      });
    }
    out.push(msg);
  }
  return out;
}
