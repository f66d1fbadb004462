/**
 * What the shared session state (session-state.ts) is made of: tool calls, decisions, todos and the transcript's
 * entries, typed after the OpenAPI document's event and message schemas.
 */
import type { components } from "./v1.js";

export type Schemas = components["schemas"];
export type SessionEvent = Schemas["SessionEvent"];
export type StoredMessage = Schemas["DisplayMessage"];

export interface ToolCall {
  id: string;
  name: string;
  /** The call's arguments as the model wrote them (JSON text). */
  args: string;
  status: "pending" | "running" | "ok" | "error";
  /** The result's text (once it ended). */
  result: string;
  /** What the call has printed while running. */
  output: string;
}

/** A command waiting for the user's answer, as `bash_confirm` and the present state carry it. */
export type Confirmation = Pick<
  Schemas["BashConfirmEvent"],
  "id" | "tool" | "command" | "reason" | "reasons" | "suggestedRule"
> & { expiresAt?: number | string };

export interface QuestionSet {
  id?: string;
  questions: Array<{
    question: string;
    header?: string;
    multiSelect?: boolean;
    options: Array<{ label: string; value: string; description?: string }>;
  }>;
}

export interface PlanTransition {
  path?: string;
  summary?: string;
  [field: string]: unknown;
}

export interface Todo {
  content: string;
  status: string;
}

export interface TrustPrompt {
  path: string;
  resources: Record<string, string[]>;
}

/** One thing the transcript shows, in stream order. */
export type Entry =
  /** A message of the stored history (a load, a rewind, a redo, an older page). */
  | { kind: "stored"; message: StoredMessage }
  /** A user message; `via` when it was injected into a running turn (steering) or queued (follow-up). */
  | { kind: "user"; text: string; seq?: number; via?: "steering" | "followup" }
  /** A finished model call: its text, its thinking and the tool calls it made (see `tools`). */
  | { kind: "assistant"; text: string; thinking?: string; toolCallIds: string[] }
  | { kind: "notice"; text: string }
  | { kind: "compaction"; messagesCompacted: unknown }
  /** Why a turn failed; `at` when it was read back from the session. */
  | { kind: "error"; message: string; at?: string }
  /** A turn's footer: the model and the time it spent generating (all its calls). */
  | { kind: "turn_meta"; model: string; generationMs: number }
  /** A turn ended; `interrupted` are the calls that were still running. */
  | { kind: "end"; reason: string; interrupted: string[] }
  /** A confirmation was answered (or timed out, or its turn was aborted). */
  | { kind: "resolved"; id: string; command: string; allowed: boolean; by: string };

/** A confirmation as a `bash_confirm` event carries it. */
export function confirmation(e: Record<string, unknown>): Confirmation {
  return {
    id: String(e.id),
    command: String(e.command ?? ""),
    reason: String(e.reason ?? ""),
    tool: typeof e.tool === "string" ? e.tool : "bash",
    reasons: Array.isArray(e.reasons) ? e.reasons.map(String) : undefined,
    suggestedRule: typeof e.suggestedRule === "string" ? e.suggestedRule : undefined,
    expiresAt: typeof e.expiresAt === "string" || typeof e.expiresAt === "number" ? e.expiresAt : undefined,
  };
}

/** The trust prompt rides on the session: present only while undecided. */
export function trustOf(v: unknown): TrustPrompt | undefined {
  if (!v || typeof v !== "object") return undefined;
  const t = v as { path?: unknown; resources?: unknown; required?: unknown };
  if (t.required === false) return undefined;
  return { path: String(t.path ?? ""), resources: (t.resources ?? {}) as Record<string, string[]> };
}

/** The text of a message's content (a string, or parts). */
export function textOf(c: unknown): string {
  if (typeof c === "string") return c;
  if (Array.isArray(c))
    return c
      .map((p) => (typeof p === "string" ? p : ((p as { text?: string }).text ?? "")))
      .filter(Boolean)
      .join("\n");
  if (c && typeof c === "object" && "text" in c) return String((c as { text: unknown }).text);
  return c === undefined || c === null ? "" : JSON.stringify(c);
}
