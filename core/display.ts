import type { StoredMessage } from "./session-types.js";
import { createToken } from "./tokens.js";

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

/** The URL a client fetches the `idx`-th image stored with message `seq` of a session from. */
export type MessageImageUrl = (sessionId: string, seq: number, idx: number) => string;

/**
 * Serves the images stored with messages (the files plugin provides it). `path` is relative to the API prefix
 * (`/sessions/<id>/image?...`); display code prefixes the request's `apiBase`.
 */
export interface MessageImages {
  path(sessionId: string, seq: number, idx: number): string;
}

export const MessageImagesToken = createToken<MessageImages>("message-images");

/** Image URLs under `apiBase` from the provider of {@link MessageImagesToken}; undefined when none is loaded. */
export function messageImageUrls(images: MessageImages | undefined, apiBase: string): MessageImageUrl | undefined {
  return images ? (sessionId, seq, idx) => apiBase + images.path(sessionId, seq, idx) : undefined;
}

/**
 * Turns stored rows into what clients render: tool results folded into the assistant message that called them,
 * images replaced by URLs (`imageUrl`; without it, when no plugin serves images, they are left out). Role "tool"
 * rows are never emitted on their own.
 */
export function toDisplayMessages(
  rows: StoredMessage[],
  sessionId: string,
  imageUrl: MessageImageUrl | undefined,
): DisplayMessage[] {
  const folder = new DisplayFolder(sessionId, imageUrl);
  folder.add(rows);
  return folder.take(true);
}

/**
 * {@link toDisplayMessages} a page of rows at a time, for a history read in pages: `take` hands out, in order, the
 * messages no later row can change (none of their tool calls still waits for its result), so a page's messages can
 * be serialised and let go before the next page is read. Taking everything at the end gives what one call over
 * all the rows gives.
 */
export class DisplayFolder {
  private readonly out: DisplayMessage[] = [];
  private readonly callIndex = new Map<string, DisplayToolCall>();

  constructor(
    private readonly sessionId: string,
    private readonly imageUrl: MessageImageUrl | undefined,
  ) {}

  add(rows: StoredMessage[]): void {
    const { out, callIndex, sessionId, imageUrl } = this;
    for (const row of rows) {
      if (row.role === "tool") {
        const call = row.toolCallId ? callIndex.get(row.toolCallId) : undefined;
        if (call) {
          const { text, images } = splitContent(row.content, imageUrl, sessionId, row.seq);
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
      const { text, images } = splitContent(row.content, imageUrl, sessionId, row.seq);
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
  }

  /** The folded messages nothing later can change, oldest first; with `all`, every one (no more rows come). */
  take(all = false): DisplayMessage[] {
    let n = this.out.length;
    if (!all) {
      n = this.out.findIndex((m) => m.toolCalls?.some((c) => c.status === "running"));
      if (n === -1) n = this.out.length;
    }
    const done = this.out.splice(0, n);
    if (all) this.callIndex.clear();
    else for (const m of done) for (const c of m.toolCalls ?? []) this.callIndex.delete(c.id);
    return done;
  }
}

/** Text of a message (parts joined) and the URLs of its images. */
function splitContent(
  content: StoredMessage["content"],
  imageUrl: MessageImageUrl | undefined,
  sessionId: string,
  seq: number,
) {
  if (!Array.isArray(content)) return { text: content, images: [] as string[] };
  const texts: string[] = [];
  const images: string[] = [];
  for (const part of content) {
    if (part.type === "text") texts.push(part.text);
    else if (imageUrl) images.push(imageUrl(sessionId, seq, images.length));
  }
  return { text: texts.join("\n"), images };
}
