/**
 * The web transcript's rows, made from the shared session state's entries (clients/api/session-state.ts). Each
 * tool call is a signal of its own, so a running call's output re-renders only its card.
 */
import type { Signal } from "@preact/signals";
import type { Entry, StoredMessage, ToolCall } from "../api/session-state.js";
import { modelLabel } from "./store.js";

export type ToolState = ToolCall;

export interface Item {
  key: string;
  role: "user" | "assistant" | "system" | "warning" | "notice" | "error";
  content: string;
  thinking?: string;
  tools?: Signal<ToolState>[];
  images?: string[];
  footer?: string;
  seq?: number;
  /** When it happened (ISO), for errors read back from the session. */
  at?: string;
}

let keyCounter = 0;
export const nextKey = () => `k${++keyCounter}`;

/** A stored message's row; `tool` gives the signal of each of its calls. */
export function storedItem(m: StoredMessage, tool: (id: string) => Signal<ToolState>): Item {
  const tools = (m.toolCalls ?? []).map((t) => tool(t.id));
  return {
    key: m.seq !== undefined ? `m${m.seq}` : nextKey(),
    role: m.role,
    content: m.content ?? "",
    thinking: m.thinking,
    tools: tools.length ? tools : undefined,
    images: m.images,
    seq: m.seq,
  };
}

/** The row a live entry shows as, if any. */
export function entryItem(e: Entry, tool: (id: string) => Signal<ToolState>): Item | undefined {
  switch (e.kind) {
    case "stored":
      return storedItem(e.message, tool);
    case "user":
      return { key: nextKey(), role: "user", content: e.text, seq: e.seq };
    case "assistant":
      return {
        key: nextKey(),
        role: "assistant",
        content: e.text,
        thinking: e.thinking,
        tools: e.toolCallIds.length ? e.toolCallIds.map(tool) : undefined,
      };
    case "notice":
      return { key: nextKey(), role: "notice", content: e.text };
    case "compaction":
      return { key: nextKey(), role: "notice", content: `Compacted ${String(e.messagesCompacted)} messages.` };
    case "error":
      return { key: nextKey(), role: "error", content: e.message, at: e.at ?? new Date().toISOString() };
    case "turn_meta":
      return { key: nextKey(), role: "notice", content: "", footer: footerText(e.model, e.generationMs) };
    case "end":
      if (e.reason === "aborted") return { key: nextKey(), role: "notice", content: "Stopped." };
      if (e.reason === "disconnected")
        return { key: nextKey(), role: "warning", content: "The provider stream ended early." };
      return undefined;
    case "resolved":
      return undefined;
  }
}

/** A turn's footer, the same live and read back: the model and the time it spent generating. */
function footerText(model: string, ms: number): string {
  return [modelLabel(model), ms ? `${(ms / 1000).toFixed(1)} s` : ""].filter(Boolean).join(" · ");
}

/**
 * Read back, a turn ends where the next user message starts: its footer (as the live `turn_meta` makes it) follows
 * its last assistant message, with the generation times of all its model calls.
 */
export function withTurnFooters(
  messages: StoredMessage[],
  toItem: (m: StoredMessage) => Item,
  running: boolean,
): Item[] {
  const out: Item[] = [];
  let model = "";
  let ms = 0;
  const close = () => {
    if (model) out.push({ key: nextKey(), role: "notice", content: "", footer: footerText(model, ms) });
    model = "";
    ms = 0;
  };
  for (const m of messages) {
    if (m.role === "user") close();
    out.push(toItem(m));
    const meta = m.turnMeta as { model?: string; generationMs?: number } | undefined;
    if (m.role === "assistant" && meta?.model) {
      model = meta.model;
      ms += meta.generationMs ?? 0;
    }
  }
  // A running turn gets its footer live, when it ends.
  if (!running) close();
  return out;
}
