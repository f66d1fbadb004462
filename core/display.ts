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
        const { text, images } = splitContent(row.content, apiBase, sessionId, row.seq);
        call.result = text ?? "";
        call.status = row.meta?.isError ? "error" : "ok";
        if (row.meta?.error) call.error = row.meta.error;
        if (images.length) call.images = images;
      }
      continue;
    }
    if (row.meta?.reminder) {
      // Daemon-injected reminders (todo gate, interruptions) are shown as warnings, not as the user's words.
      out.push({ role: "warning", content: `[system] ${typeof row.content === "string" ? row.content : ""}` });
      continue;
    }
    const msg: DisplayMessage = { role: row.role, content: null, seq: row.seq };
    const { text, images } = splitContent(row.content, apiBase, sessionId, row.seq);
    msg.content = text;
    if (images.length) msg.images = images;
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

/** Text of a message (parts joined) and the URLs of its images. */
function splitContent(content: StoredMessage["content"], apiBase: string, sessionId: string, seq: number) {
  if (!Array.isArray(content)) return { text: content, images: [] as string[] };
  const texts: string[] = [];
  const images: string[] = [];
  for (const part of content) {
    if (part.type === "text") texts.push(part.text);
    else images.push(imageUrl(apiBase, sessionId, seq, images.length));
  }
  return { text: texts.join("\n"), images };
}
