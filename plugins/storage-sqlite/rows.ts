import type {
  MessageContent,
  MessageRole,
  NewMessage,
  SessionListEntry,
  SessionRecord,
  SessionUsage,
  StoredMessage,
  StoredToolCall,
} from "../../core/index.js";
import { emptyUsage } from "../../core/index.js";

/** A session's columns (`sessionFromRow`), a listing's (`entryFromRaw`, in this order) and a message's. */
export const SESSION_COLS = `s.id, s.title, s.pinned, s.persona, s.model, s.cwd, s.mode, s.is_sandbox, s.share_token,
  s.message_count, s.usage, s.meta, s.created_at, s.updated_at`;
export const ENTRY_COLS =
  "s.id, s.title, s.pinned, s.persona, s.model, s.cwd, s.mode, s.is_sandbox, s.message_count, s.created_at, s.updated_at";
export const MESSAGE_COLS = `seq, role, content, tool_calls, tool_call_id, tool_name, thinking, client_message_id, in_context,
  created_at, meta`;
export const LIST_ORDER = "ORDER BY s.pinned DESC, s.updated_at DESC, s.id DESC";

/** A `sessions` row as better-sqlite3 returns it. */
export interface SessionRow {
  id: string;
  title: string | null;
  pinned: number;
  persona: string;
  model: string;
  cwd: string;
  mode: string;
  is_sandbox: number;
  share_token: string | null;
  message_count: number;
  usage: string;
  meta: string;
  created_at: string;
  updated_at: string;
}

/** A `messages` row (the columns `messageFromRow` needs). */
export interface MessageRow {
  seq: number;
  role: string;
  content: string;
  tool_calls: string | null;
  tool_call_id: string | null;
  tool_name: string | null;
  thinking: string | null;
  client_message_id: string | null;
  in_context: number;
  created_at: string;
  meta: string | null;
}

/** A `messages` row as an array, in the column order of `MessageRow` (the statement's `raw` mode). */
export type MessageRaw = [
  seq: number,
  role: string,
  content: string,
  tool_calls: string | null,
  tool_call_id: string | null,
  tool_name: string | null,
  thinking: string | null,
  client_message_id: string | null,
  in_context: number,
  created_at: string,
  meta: string | null,
];

/** Named parameters of the session upsert statements: the row's columns. */
export type SessionParams = SessionRow;

/** Named parameters of the message insert. */
export interface MessageParams extends MessageRow {
  session_id: string;
  search_text: string;
  counts: number;
}

export function sessionToParams(rec: SessionRecord): SessionParams {
  return {
    id: rec.id,
    title: rec.title,
    pinned: rec.pinned ? 1 : 0,
    persona: rec.persona,
    model: rec.model,
    cwd: rec.cwd,
    mode: rec.mode,
    is_sandbox: rec.isSandbox ? 1 : 0,
    share_token: rec.shareToken,
    message_count: rec.messageCount,
    usage: JSON.stringify(rec.usage),
    meta: JSON.stringify(rec.meta ?? {}),
    created_at: rec.createdAt,
    updated_at: rec.updatedAt,
  };
}

export function sessionFromRow(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    title: row.title,
    pinned: row.pinned !== 0,
    persona: row.persona,
    model: row.model,
    cwd: row.cwd,
    mode: row.mode === "plan" ? "plan" : "build",
    isSandbox: row.is_sandbox !== 0,
    shareToken: row.share_token,
    messageCount: row.message_count,
    // Older rows may lack newer counters: fill them from the defaults instead of surfacing undefined.
    usage: { ...emptyUsage(), ...parseObject<SessionUsage>(row.usage) },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    meta: parseObject<Record<string, unknown>>(row.meta),
  };
}

/** A listing row as an array, in the column order of the store's `ENTRY_COLS` (the statement's `raw` mode). */
export type EntryRaw = [
  id: string,
  title: string | null,
  pinned: number,
  persona: string,
  model: string,
  cwd: string,
  mode: string,
  is_sandbox: number,
  message_count: number,
  created_at: string,
  updated_at: string,
];

export function entryFromRaw(r: EntryRaw): SessionListEntry {
  return {
    id: r[0],
    title: r[1],
    pinned: r[2] !== 0,
    persona: r[3],
    model: r[4],
    cwd: r[5],
    mode: r[6] === "plan" ? "plan" : "build",
    isSandbox: r[7] !== 0,
    messageCount: r[8],
    createdAt: r[9],
    updatedAt: r[10],
  };
}

function parseObject<V extends object>(json: string | null): V {
  if (!json) return {} as V;
  const v: unknown = JSON.parse(json);
  return (v && typeof v === "object" && !Array.isArray(v) ? v : {}) as V;
}

/** The plain text of a message's content, as indexed for search. */
export function contentText(content: MessageContent): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const p of content) if (p.type === "text") parts.push(p.text);
  return parts.join("\n");
}

/** Only what people wrote or read is searchable: tool output and system prompts would drown every query. */
function searchableText(role: MessageRole, text: string): string {
  return role === "user" || role === "assistant" ? text : "";
}

/** The `messageCount` rule: user messages, and assistant messages that said something (not tool-call-only). */
export function countsAsMessage(role: MessageRole, text: string): boolean {
  return role === "user" || (role === "assistant" && text.trim() !== "");
}

export function messageToParams(sessionId: string, seq: number, createdAt: string, msg: NewMessage): MessageParams {
  const text = contentText(msg.content);
  return {
    session_id: sessionId,
    seq,
    role: msg.role,
    content: JSON.stringify(msg.content ?? null),
    tool_calls: msg.toolCalls ? JSON.stringify(msg.toolCalls) : null,
    tool_call_id: msg.toolCallId ?? null,
    tool_name: msg.toolName ?? null,
    thinking: msg.thinking ?? null,
    client_message_id: msg.clientMessageId ?? null,
    in_context: msg.inContext === false ? 0 : 1,
    created_at: createdAt,
    meta: msg.meta ? JSON.stringify(msg.meta) : null,
    search_text: searchableText(msg.role, text),
    counts: countsAsMessage(msg.role, text) ? 1 : 0,
  };
}

export function messageFromRow(row: MessageRow): StoredMessage {
  const m: StoredMessage = {
    seq: row.seq,
    role: row.role as MessageRole,
    content: JSON.parse(row.content) as MessageContent,
    inContext: row.in_context !== 0,
    createdAt: row.created_at,
  };
  if (row.tool_calls !== null) m.toolCalls = JSON.parse(row.tool_calls) as StoredToolCall[];
  if (row.tool_call_id !== null) m.toolCallId = row.tool_call_id;
  if (row.tool_name !== null) m.toolName = row.tool_name;
  if (row.thinking !== null) m.thinking = row.thinking;
  if (row.client_message_id !== null) m.clientMessageId = row.client_message_id;
  if (row.meta !== null) m.meta = parseObject<Record<string, unknown>>(row.meta);
  return m;
}

/** `messageFromRow` for a raw row (see `MessageRaw`). */
export function messageFromRaw(r: MessageRaw): StoredMessage {
  const content = r[2];
  const m: StoredMessage = {
    seq: r[0],
    role: r[1] as MessageRole,
    // Most content is a plain string: its JSON is a quoted string without escapes, cheaper to unquote than to parse.
    content: (isPlainJsonString(content) ? content.slice(1, -1) : JSON.parse(content)) as MessageContent,
    inContext: r[8] !== 0,
    createdAt: r[9],
  };
  if (r[3] !== null) m.toolCalls = JSON.parse(r[3]) as StoredToolCall[];
  if (r[4] !== null) m.toolCallId = r[4];
  if (r[5] !== null) m.toolName = r[5];
  if (r[6] !== null) m.thinking = r[6];
  if (r[7] !== null) m.clientMessageId = r[7];
  if (r[10] !== null) m.meta = parseObject<Record<string, unknown>>(r[10]);
  return m;
}

/** `"..."` with no backslash inside: JSON.parse would return exactly the characters between the quotes. */
function isPlainJsonString(json: string): boolean {
  return json.length >= 2 && json.charCodeAt(0) === 34 && json.indexOf("\\") === -1;
}
