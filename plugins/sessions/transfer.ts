import { statSync } from "node:fs";
import { Readable } from "node:stream";
import {
  ApiError,
  type NewMessage,
  type SessionRecord,
  type SessionStore,
  type StoredMessage,
  T,
} from "../../core/index.js";

export const EXPORT_FORMAT = "agentd.session";
export const EXPORT_VERSION = 1;
/** Messages read from the store per step while streaming an export. */
const PAGE = 200;

const ContentPart = T.Union([
  T.Object({ type: T.Literal("text"), text: T.String() }, { additionalProperties: false }),
  T.Object(
    { type: T.Literal("image_url"), image_url: T.Object({ url: T.String() }, { additionalProperties: false }) },
    { additionalProperties: false },
  ),
]);

export const ExportedMessageSchema = T.Object(
  {
    role: T.Union([T.Literal("system"), T.Literal("user"), T.Literal("assistant"), T.Literal("tool")]),
    content: T.Union([T.String(), T.Null(), T.Array(ContentPart)]),
    toolCalls: T.Optional(
      T.Array(
        T.Object(
          { id: T.String(), name: T.String(), arguments: T.String({ description: "Raw JSON from the model" }) },
          { additionalProperties: false },
        ),
      ),
    ),
    toolCallId: T.Optional(T.String()),
    toolName: T.Optional(T.String()),
    thinking: T.Optional(T.String()),
    clientMessageId: T.Optional(T.String()),
    inContext: T.Boolean({ description: "Part of what is sent to the model (false after compaction or /clear)" }),
    createdAt: T.String({ format: "date-time" }),
    meta: T.Optional(T.Object({}, { additionalProperties: true })),
  },
  { title: "ExportedMessage", additionalProperties: false },
);

export const SessionExportSchema = T.Object(
  {
    format: T.Literal(EXPORT_FORMAT),
    version: T.Literal(EXPORT_VERSION),
    exportedAt: T.String({ format: "date-time" }),
    session: T.Object(
      {
        id: T.String({ description: "The id in the exporting daemon (a new id is given on import)" }),
        title: T.Union([T.String({ maxLength: 10_000 }), T.Null()]),
        persona: T.String({ maxLength: 200 }),
        model: T.String({ maxLength: 200 }),
        cwd: T.String({ maxLength: 4096 }),
        mode: T.Union([T.Literal("build"), T.Literal("plan")]),
        createdAt: T.String({ format: "date-time" }),
        compactionSummary: T.Optional(T.String({ description: "Summary of compacted-out context, if any" })),
      },
      { additionalProperties: false },
    ),
    messages: T.Array(ExportedMessageSchema),
  },
  {
    title: "SessionExport",
    description:
      "A whole conversation: every stored message with its tool calls and results, in order. Secrets the daemon " +
      "holds (keys, share tokens) are never added; what tools printed is included as stored.",
  },
);

function exportedMessage(m: StoredMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { role: m.role, content: m.content };
  if (m.toolCalls?.length) out.toolCalls = m.toolCalls;
  if (m.toolCallId !== undefined) out.toolCallId = m.toolCallId;
  if (m.toolName !== undefined) out.toolName = m.toolName;
  if (m.thinking) out.thinking = m.thinking;
  if (m.clientMessageId !== undefined) out.clientMessageId = m.clientMessageId;
  out.inContext = m.inContext;
  out.createdAt = m.createdAt;
  if (m.meta && Object.keys(m.meta).length) out.meta = m.meta;
  return out;
}

/** Every message of a session in order, a page at a time (the whole history is never held at once). */
async function* allMessages(store: SessionStore, id: string): AsyncGenerator<StoredMessage> {
  if (!store.readMessages) {
    yield* (await store.historyPage(id, 0)).messages;
    return;
  }
  let after = 0;
  for (;;) {
    const page = await store.readMessages(id, after, PAGE);
    yield* page;
    const last = page.at(-1);
    if (!last || page.length < PAGE) return;
    after = last.seq;
    // Let other requests run between pages of a large export.
    await new Promise<void>((r) => setImmediate(r));
  }
}

function header(rec: SessionRecord) {
  const session: Record<string, unknown> = {
    id: rec.id,
    title: rec.title,
    persona: rec.persona,
    model: rec.model,
    cwd: rec.cwd,
    mode: rec.mode,
    createdAt: rec.createdAt,
  };
  if (typeof rec.meta.compactionSummary === "string") session.compactionSummary = rec.meta.compactionSummary;
  return session;
}

/** The JSON export, streamed: header, then one message at a time. */
export function exportJson(store: SessionStore, rec: SessionRecord): Readable {
  async function* chunks() {
    const head = JSON.stringify({
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      exportedAt: new Date().toISOString(),
      session: header(rec),
    });
    yield `${head.slice(0, -1)},"messages":[`;
    let first = true;
    for await (const m of allMessages(store, rec.id)) {
      yield `${first ? "" : ","}\n${JSON.stringify(exportedMessage(m))}`;
      first = false;
    }
    yield "\n]}\n";
  }
  return Readable.from(chunks());
}

/** A fence longer than any run of backticks in `text`. */
function fence(text: string): string {
  let longest = 2;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return "`".repeat(longest + 1);
}

function block(text: string, lang = ""): string {
  const f = fence(text);
  return `${f}${lang}\n${text}\n${f}\n`;
}

function textOf(content: StoredMessage["content"]): string {
  if (content === null) return "";
  if (typeof content === "string") return content;
  return content.map((p) => (p.type === "text" ? p.text : "[image]")).join("\n");
}

function prettyArgs(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

function markdownOf(m: StoredMessage): string {
  const when = m.createdAt ? ` · ${m.createdAt}` : "";
  const parts: string[] = [];
  if (m.role === "tool") {
    const failed = m.meta?.isError ? " (error)" : "";
    parts.push(`#### Result of \`${m.toolName ?? "tool"}\`${failed}\n\n${block(textOf(m.content))}`);
    return parts.join("\n");
  }
  const who = m.meta?.reminder
    ? "System reminder"
    : m.role === "user"
      ? "User"
      : m.role === "assistant"
        ? "Assistant"
        : "System";
  parts.push(`### ${who}${when}\n`);
  if (m.thinking) parts.push(`<details><summary>Thinking</summary>\n\n${block(m.thinking)}\n</details>\n`);
  const text = textOf(m.content);
  if (text) parts.push(`${text}\n`);
  for (const call of m.toolCalls ?? [])
    parts.push(`#### Tool call \`${call.name}\`\n\n${block(prettyArgs(call.arguments), "json")}`);
  return parts.join("\n");
}

/** The Markdown export, streamed: a title block, then each message with its tool calls and results. */
export function exportMarkdown(store: SessionStore, rec: SessionRecord): Readable {
  async function* chunks() {
    const lines = [
      `# ${rec.title ?? "Untitled session"}`,
      "",
      `- Session: \`${rec.id}\``,
      `- Model: \`${rec.model}\`, persona: \`${rec.persona}\`, mode: ${rec.mode}`,
      `- Working directory: \`${rec.cwd}\``,
      `- Created: ${rec.createdAt}`,
      "",
    ];
    yield `${lines.join("\n")}\n`;
    for await (const m of allMessages(store, rec.id)) yield `${markdownOf(m)}\n`;
  }
  return Readable.from(chunks());
}

export interface ImportDoc {
  session: { title: string | null; persona: string; model: string; cwd: string; mode: "build" | "plan" };
  messages: Array<Record<string, unknown>>;
}

/** The directory of an imported session: the exported one when it exists here, else the daemon's default. */
export function importCwd(cwd: string): string | undefined {
  try {
    return statSync(cwd).isDirectory() ? cwd : undefined;
  } catch {
    return undefined;
  }
}

/** Checks that tool results answer calls made earlier in the same document (else the model would reject it). */
export function checkToolPairs(messages: ImportDoc["messages"]): void {
  const calls = new Set<string>();
  messages.forEach((m, i) => {
    for (const c of (m.toolCalls as Array<{ id: string }> | undefined) ?? []) calls.add(c.id);
    if (m.role === "tool" && (typeof m.toolCallId !== "string" || !calls.has(m.toolCallId))) {
      throw ApiError.badRequest(`messages[${i}]: a tool result must answer a tool call of an earlier message`);
    }
  });
}

export function toNewMessage(m: Record<string, unknown>): NewMessage {
  const { role, content, toolCalls, toolCallId, toolName, thinking, clientMessageId, inContext, createdAt, meta } =
    m as unknown as StoredMessage;
  const out: NewMessage = { role, content, inContext, createdAt };
  if (toolCalls) out.toolCalls = toolCalls;
  if (toolCallId !== undefined) out.toolCallId = toolCallId;
  if (toolName !== undefined) out.toolName = toolName;
  if (thinking !== undefined) out.thinking = thinking;
  if (clientMessageId !== undefined) out.clientMessageId = clientMessageId;
  if (meta !== undefined) out.meta = meta;
  return out;
}
