import type { ChatMessage, Persona, Provider, ToolDefinition } from "../contributions.js";
import type { EventBus, SessionEvent } from "../events.js";
import type { Logger } from "../logger.js";
import type { SessionRecord, SessionTodo } from "../session-types.js";
import type { SessionWriter } from "../session-writer.js";

export type UserContent =
  | string
  | Array<{ type: "text"; text: string } | { type: "image_url"; image_url: { url: string } }>;

/** A user message waiting in a queue (steering or follow-up). */
export interface QueuedMessage {
  content: UserContent;
  clientMessageId?: string;
  /** Taken from the follow-up (or leftover steering) queue of the previous turn: announced as `followup_injected`. */
  fromQueue?: boolean;
}

/** A live, not-yet-persisted block of the running model call (GET /sessions/{id} `streaming`). */
export interface StreamBlock {
  order: number;
  kind: "thinking" | "content";
  text: string;
}

/** A todo item of a session (the same as `SessionMeta.todos`' items). */
export type TodoItem = SessionTodo;

export interface AgentSettings {
  /** Per-turn iteration cap (10..10000, default 500). Read at the start of every agent call. */
  maxTurnIterations(): number;
  /** Context window of a model in tokens (compaction triggers at 75%). */
  contextWindow(model: string): number;
  /** How long a dangerous-command confirmation waits before it counts as denied. */
  confirmTimeoutMs(): number;
}

/** What the agent loop needs from the rest of the daemon. */
export interface AgentDeps {
  /** The session layer's writer: every read and write of a session record goes through it (the rules it states). */
  sessions: SessionWriter;
  publish(sessionId: string, event: SessionEvent): void;
  bus: EventBus;
  log: Logger;
  /** The tools a session may be offered (a project plugin's only in its project); without `rec`, all. */
  tools(rec?: SessionRecord): ToolDefinition[];
  provider(rec: SessionRecord): Provider | undefined;
  persona(rec: SessionRecord): Persona | undefined;
  /** Project instructions (AGENTS.md, rules) for the session's working directory. */
  instructions(rec: SessionRecord): string;
  settings: AgentSettings;
  /** Paths the agent must not see (the sandbox's hidden list), for the tools' `ToolContext.isHidden`. */
  isHidden?(abs: string, cwd: string): boolean;
  /**
   * Crash recovery. `turnStarting` is called synchronously before a turn's first event is published (the recovery
   * marker names the turn before anything of it can be stored) and returns the turn's entry; `turnEnded` once its
   * `end` is published: the entry is dropped once the `end` is stored. The session's next turn may start meanwhile.
   */
  recovery: {
    turnStarting(sessionId: string): number;
    turnEnded(entry: number): Promise<void>;
  };
}

export type { ChatMessage };
