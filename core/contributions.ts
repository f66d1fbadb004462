import type { TSchema } from "@sinclair/typebox";

/* ---------- tools ---------- */

/** Stable failure codes a model can act on (see README "Tool errors"). */
export type ToolErrorCode =
  | "invalid_arguments"
  | "unknown_tool"
  | "not_found"
  | "permission_denied"
  | "outside_workspace"
  | "conflict"
  | "timeout"
  | "aborted"
  | "too_large"
  | "unavailable"
  | "execution_failed"
  | (string & {});

export interface ToolError {
  code: ToolErrorCode;
  retryable: boolean;
  suggestedFix: string;
}

export interface ToolImage {
  /** data: URL (image/png, image/jpeg, ...). */
  dataUrl: string;
}

export interface ToolResult {
  /** What the model reads. Also the readable diagnostic when the call failed. */
  content: string;
  isError?: boolean;
  error?: ToolError;
  images?: ToolImage[];
  /** Structured extras for clients (never sent to the model). */
  meta?: Record<string, unknown>;
  /** Ends the turn once this batch of tool calls is done (e.g. `plan_done` hands over to the user). */
  endsTurn?: boolean;
}

export interface ConfirmationRequest {
  /** The tool asking (bash, ssh, ...). */
  tool: string;
  /** The exact command (or action) that would run. */
  command: string;
  /** Why it needs confirmation, readable ("recursive delete of src/"). */
  reason: string;
  /** The kinds of reason: "dangerous", "network", "not sandboxed", "rule". */
  reasons?: string[];
  /** The approval rule offered when the user answers (`npm run test *`); the user may narrow it. */
  suggestedRule?: string;
}

export interface QuestionOption {
  label: string;
  value: string;
  description?: string;
}

export interface Question {
  question: string;
  options: QuestionOption[];
  multiSelect?: boolean;
}

/** One answer per question: a value, or the chosen values of a multi-select question. */
export type QuestionAnswer = string | string[];

export interface ToolContext {
  readonly sessionId: string;
  /** The session's working directory (absolute, realpath). */
  readonly cwd: string;
  readonly toolCallId: string;
  /** build: full toolset; plan: read-only except the plans directory (tools enforce their own part). */
  readonly mode: "build" | "plan";
  /** `<cwd>/.agentd/plans/<session id>`: where write/edit may write in plan mode. */
  readonly plansDir: string;
  /** default: risky commands need confirmation; bypass: no confirmation is asked. */
  readonly permissionMode: "default" | "bypass";
  /** Aborted when the turn is aborted; tools must stop promptly. */
  readonly signal: AbortSignal;
  /** Emits a session event (e.g. progress) on the session's stream. */
  emit(event: { type: string; [k: string]: unknown }): void;
  /**
   * Asks the user to allow a risky action (a `bash_confirm` event; the turn is blocked until answered).
   * Resolves true when allowed, false when denied, timed out or aborted. Resolves true at once in bypass mode,
   * unless `reasons` holds "not sandboxed" or "rule" (those are always the user's to answer).
   */
  confirm(req: ConfirmationRequest): Promise<boolean>;
  /** Asks the user questions (a `question` event); resolves with one answer per question. Rejects on abort. */
  ask(questions: Question[]): Promise<QuestionAnswer[]>;
  /**
   * Whether an absolute, resolved path is hidden from the agent (the daemon home, ~/.ssh, credentials, config
   * `sandbox.hidden`): file tools treat it as absent and leave it out of listings. Absent: nothing is hidden.
   */
  isHidden?(abs: string): boolean;
  /**
   * The editor attached to the session (an ACP client offering its file system), when there is one: file tools
   * read and write text files through it, so unsaved buffers are what the model sees. Rejections mean the editor
   * refused or is gone; reads then fall back to the disk.
   */
  readonly editor?: EditorFs;
}

/** Text file access through the user's editor (absolute paths). Absent operations are not offered. */
export interface EditorFs {
  read?(path: string): Promise<string>;
  write?(path: string, content: string): Promise<void>;
}

export interface ToolDefinition<A = Record<string, unknown>> {
  name: string;
  description: string;
  /** JSON Schema (object) of the arguments, sent to the model and validated before `execute`. */
  parameters: TSchema;
  /** Read-only tools of one assistant message run concurrently; the others run in call order. */
  readOnly?: boolean;
  /** Session modes in which the model is offered this tool (default: both). */
  modes?: Array<"build" | "plan">;
  /** Offered in this session only (e.g. the MCP servers an editor gave one session); default: every session. */
  sessionId?: string;
  /** Offered only in sessions of this project root (set by the host for project-local plugins). */
  projectRoot?: string;
  execute(args: A, ctx: ToolContext): Promise<ToolResult>;
}

/* ---------- personas and themes ---------- */

export interface Persona {
  name: string;
  label: string;
  description: string;
  /** The system prompt. */
  prompt: string;
  source: "builtin" | "global" | "project" | "plugin";
  /** Visible only to sessions of this project root (set by the host for project-local plugins). */
  projectRoot?: string;
}

export interface Theme {
  id: string;
  label: string;
  description: string;
  colors: Record<string, string | { from: string; to: string }>;
}

/* ---------- slash commands ---------- */

export interface CommandInvocation {
  /** The session the command runs in, or undefined for global (`/settings/command`) use. */
  readonly sessionId: string | undefined;
  /** Everything after the command name, trimmed. */
  readonly args: string;
}

export interface SlashCommand {
  /** Without the leading slash. */
  name: string;
  description: string;
  aliases?: string[];
  takesArgs?: boolean;
  /** What to type after the name, e.g. `[N|reset]` (shown by GET /commands and in composers). */
  argumentHint?: string;
  /** Refused with 409 while a turn runs. */
  blocking?: boolean;
  /** Runs without a session (accepted by POST /settings/command). */
  global?: boolean;
  /** Available only in sessions of this project root (set by the host for project-local plugins). */
  projectRoot?: string;
  run(inv: CommandInvocation): CommandResult | Promise<CommandResult>;
}

/**
 * What a command answers (`POST /sessions/{id}/command` turns it into `{result, data?}`): the readable text, or an
 * object whose `message` is the text and whose other fields are the reply's structured `data`; nothing answers
 * "/name done".
 */
export type CommandResult = string | CommandReply | undefined | void;

/** A command's structured answer: `message` is what a client shows, the other fields are its `data`. */
export interface CommandReply {
  message?: string;
  [field: string]: unknown;
}

/* ---------- providers ---------- */

export interface ModelInfo {
  id: string;
  ownedBy?: string;
  contextWindow?: number;
  reasoningSupported?: boolean;
}

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null | Array<{ type: "text"; text: string } | { type: "image_url"; image_url: { url: string } }>;
  tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  reasoning_content?: string;
}

export interface ProviderRequest {
  model: string;
  messages: ChatMessage[];
  tools?: Array<{ type: "function"; function: { name: string; description: string; parameters: unknown } }>;
  reasoningEffort?: string;
}

export type ProviderDelta =
  | { type: "content"; text: string }
  | { type: "reasoning"; text: string }
  | { type: "tool_call"; index: number; id?: string; name?: string; argumentsDelta?: string }
  | {
      type: "usage";
      usage: { promptTokens: number; completionTokens: number; totalTokens: number; cacheReadTokens?: number };
    }
  | { type: "retry"; attempt: number; delayMs: number; reason: string }
  | { type: "finish"; reason: string };

export interface Provider {
  id: string;
  description: string;
  /** Streams one model call. Ends without a `finish` delta when the connection dropped mid-way. */
  stream(req: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderDelta>;
  listModels(signal?: AbortSignal): Promise<ModelInfo[]>;
  /**
   * Optional: loads what the first call needs (SDK modules, a client) ahead of it. The host calls it once, after
   * the daemon's first request, off every request's path; it must not contact the provider.
   */
  warmUp?(): Promise<void>;
}
