import type { WorktreeInfo } from "./worktrees.js";

export type SessionMode = "build" | "plan";
export type SessionStatus = "idle" | "running" | "error";

export interface SessionUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cost: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  uncachedTokens: number;
  subagentTokens: number;
}

export function emptyUsage(): SessionUsage {
  return {
    promptTokens: 0,
    completionTokens: 0,
    totalTokens: 0,
    cost: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    uncachedTokens: 0,
    subagentTokens: 0,
  };
}

/** A session as stored. Timestamps are ISO-8601 strings. */
export interface SessionRecord {
  id: string;
  title: string | null;
  pinned: boolean;
  persona: string;
  model: string;
  cwd: string;
  mode: SessionMode;
  isSandbox: boolean;
  shareToken: string | null;
  /** user messages + assistant messages with text (tool-call-only steps do not count). Same for every reader. */
  messageCount: number;
  usage: SessionUsage;
  createdAt: string;
  updatedAt: string;
  /** Plugin-owned extra state (todos, plan transition, ...), small JSON; typed per key in {@link SessionMeta}. */
  meta: SessionMeta;
}

/** A todo item of a session (`todo_write`). */
export interface SessionTodo {
  content: string;
  status: "pending" | "in_progress" | "completed" | "cancelled";
  priority?: "high" | "medium" | "low";
  /** Taken from an open step of the plan (plan transition). */
  planStep?: boolean;
}

/**
 * Per-session metadata, persisted as JSON with the session. Every key is declared here with its type and owner; a
 * plugin adds its own keys by declaration merging (`declare module "agentd" { interface SessionMeta { "my-plugin.key"?:
 * T } }`, in-repo plugins augment `core/session-types.js`), so readers need no casts. The store does not validate the
 * values: readers of numbers still check them.
 */
export interface SessionMeta {
  /** agent: the session's todo list (todo_write; the todo gate and the system prompt read it). */
  todos?: SessionTodo[];
  /** agent: the plan waiting for a decision after plan_done (`POST /sessions/{id}/plan-transition`). */
  planTransition?: { kind: string; path?: string; summary?: string };
  /** agent: the summary that replaced compacted history. */
  compactionSummary?: string;
  /** commands (/cap): the session's own iteration cap. */
  turnCap?: number;
  /** commands, settings: the reasoning effort sent with model calls. */
  reasoningEffort?: string;
  /** commands (/permissions), config default: "bypass" skips dangerous-command confirmations. */
  permissionMode?: "default" | "bypass";
  /** commands (/provider): the provider id the session uses (else the first one). */
  provider?: string;
  /** sessions (fork): the id of the session this one was forked from. */
  forkedFrom?: string;
  /**
   * agent: why the session's last turn failed, shown after its messages on every later read (GET /sessions/{id}:
   * `lastError`) until the next turn starts. `afterSeq`: the last stored message when it failed.
   */
  lastTurnError?: SessionTurnError;
  /** sessions (share): the shared page shows tool results (file contents, command output); off unless chosen. */
  shareToolResults?: boolean;
}

/** A failed turn's error as kept with its session. */
export interface SessionTurnError {
  message: string;
  afterSeq: number;
  at: string;
}

/**
 * A trust decision a session's clients must ask for: its project is undecided and has local resources
 * (`resources` has the same shape as the `project_trust_required` event's).
 */
export interface ProjectTrustPrompt {
  required: true;
  /** The project root to pass (as `cwd`) to `POST /projects/trust`. */
  path: string;
  resources: ProjectResourceNames;
}

/** What a project would load once trusted, by kind (names only). */
export interface ProjectResourceNames {
  personas: string[];
  skills: string[];
  rules: string[];
  contextFiles: string[];
  mcp: string[];
  hooks: string[];
  ssh: string[];
  /** Plugins in `.agentd/plugins`, with their state against the hashes trust was pinned to. */
  plugins: Array<{ name: string; hash: string; state: "trusted" | "new" | "changed" }>;
}

/** Element of GET /sessions and of the all-sessions stream. */
export interface SessionSummary {
  id: string;
  persona: string;
  model: string;
  cwd: string;
  title?: string;
  pinned?: boolean;
  mode: SessionMode;
  status: SessionStatus;
  isSandbox: boolean;
  messageCount: number;
  createdAt: string;
  updatedAt: string;
  /** Present while the session's project waits for a trust decision. */
  projectTrust?: ProjectTrustPrompt;
  /** Present while the session waits for the user's decision (see {@link SessionWaiting}). */
  waiting?: SessionWaiting;
  /** Present when the session works in a git worktree of its own. */
  worktree?: WorktreeInfo;
  /** In a search (`GET /sessions?q=`) whose terms the title does not hold: the newest message that matched. */
  match?: SessionMatch;
}

/** Why a session matched a search: an excerpt of its newest matching message. */
export interface SessionMatch {
  seq: number;
  role: string;
  snippet: string;
}

/**
 * What a session waits for from its user, most urgent first when several are pending: a dangerous-command
 * confirmation (the turn is blocked and the confirmation times out), a question (the turn is blocked), or the
 * approval of a finished plan (the turn has ended).
 */
export type SessionWaiting = "confirmation" | "question" | "plan";

export type MessageRole = "system" | "user" | "assistant" | "tool";

export type MessageContent =
  | string
  | null
  | Array<{ type: "text"; text: string } | { type: "image_url"; image_url: { url: string } }>;

export interface StoredToolCall {
  id: string;
  name: string;
  /** Raw JSON string from the model. */
  arguments: string;
}

/** One row of a session's history, appended once and never rewritten (only its in-context flag changes). */
export interface StoredMessage {
  seq: number;
  role: MessageRole;
  content: MessageContent;
  toolCalls?: StoredToolCall[];
  /** For role "tool": the call it answers, and the tool's name. */
  toolCallId?: string;
  toolName?: string;
  thinking?: string;
  clientMessageId?: string;
  /** Part of what is sent to the model (false after compaction / clean-context). */
  inContext: boolean;
  createdAt: string;
  /** Extra structured data (tool error, turn meta, ...). */
  meta?: Record<string, unknown>;
}

export type NewMessage = Omit<StoredMessage, "seq" | "createdAt" | "inContext"> & {
  inContext?: boolean;
  createdAt?: string;
};

/** A stored session event (the audit trail and the replay source). */
export interface StoredEvent {
  seq: number;
  ts: string;
  type: string;
  /** The event JSON exactly as it went on the wire. */
  json: string;
}
