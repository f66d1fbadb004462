import type { ToolResult } from "./contributions.js";
import { type Disposable, toDisposable } from "./disposable.js";
import type { Logger } from "./logger.js";
import type { SessionSummary } from "./session-types.js";
import type { SessionEvent } from "./wire-events.js";
import type { WorktreeInfo } from "./worktrees.js";

/** A session event as it goes on the wire (see `core/wire-events.ts`). `sessionId` and `seq` are added by the log. */
export type { SessionEvent, SessionEventOf, SessionEventType } from "./wire-events.js";

export type EndReason = "stop" | "aborted" | "error" | "disconnected";

/** What a `tool.before` / `tool.after` handler decides, through `waitUntil`. */
export interface ToolHookVerdict {
  /** Before: vetoes the call; the reason becomes the tool's error result. After: added to the result as feedback. */
  block?: string;
  /** Text added to the result the model reads (after a call). */
  feedback?: string;
}

/** A tool call about to run (validated arguments) or just finished, for policies and hooks around tools. */
export interface ToolHookEvent {
  sessionId: string;
  cwd: string;
  toolCallId: string;
  tool: string;
  args: Record<string, unknown>;
  /** Aborted with the turn. */
  signal: AbortSignal;
  /** Makes the call wait for an async decision (the loop awaits every promise given here). */
  waitUntil(decision: Promise<ToolHookVerdict | undefined | void>): void;
}

/** A message as it was stored (the number is the message's own `seq` in the session's history). */
export interface AppendedMessage {
  role: "user" | "assistant" | "tool";
  seq: number;
  clientMessageId?: string;
  /** Tool messages: the call they answer and the tool's name. */
  toolCallId?: string;
  toolName?: string;
  /** Assistant messages: the tool calls the model made. */
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
}

/**
 * The typed lifecycle events of the in-process bus, keyed by their `type`; each payload carries its own `type`, so
 * {@link BusEvent} is a discriminated union a handler can `switch` on. Plugins react to these, not to the wire
 * events clients see (`session.event` is the host's relay of those, for transports and benchmarks).
 *
 * Plugins may add their own event types by declaration merging (the payload must carry `type` too):
 * `declare module "agentd" { interface BusEvents { "my.event": { type: "my.event"; ... } } }`.
 */
export interface BusEvents {
  "session.created": { type: "session.created"; session: SessionSummary };
  "session.updated": { type: "session.updated"; session: SessionSummary };
  "session.deleted": { type: "session.deleted"; sessionId: string; session: SessionSummary };
  /** A turn was accepted and is about to run (project resources such as MCP servers may be prepared here). */
  "turn.started": { type: "turn.started"; sessionId: string; cwd: string; startedAt: number };
  /** A turn ended (after its `end` event), with the reason it ended. */
  "turn.ended": { type: "turn.ended"; sessionId: string; reason: EndReason };
  /**
   * A turn stored a message. `opensTurn` marks the user message a turn starts with (the one that started it, or the
   * follow-up that became the next turn); steering, follow-ups injected mid-turn and reminders do not open one.
   */
  "message.appended": { type: "message.appended"; sessionId: string; message: AppendedMessage; opensTurn: boolean };
  /** Before a tool call with valid arguments runs; a verdict with `block` vetoes it. */
  "tool.before": ToolHookEvent & { type: "tool.before" };
  /** After a tool call ran, before its result is recorded; verdicts may add feedback for the model. */
  "tool.after": ToolHookEvent & { type: "tool.after"; result: ToolResult };
  /**
   * `/reload` ran: project resources (skills, rules, personas, context files) were re-read; plugins holding their
   * own copies (MCP servers, SSH hosts) re-read theirs. `sessionId` is absent for a global reload.
   */
  "resources.reload": { type: "resources.reload"; cwd: string; sessionId?: string };
  /**
   * A session's worktree was made (creation, fork, `/worktree new`) and the session is stored: the project's
   * `worktree` hooks run here; the session's creation waits for every promise given to `waitUntil`.
   */
  "worktree.created": {
    type: "worktree.created";
    sessionId: string;
    worktree: WorktreeInfo;
    waitUntil(work: Promise<unknown>): void;
  };
  /** The host's relay of every wire event appended to a session's log (after it got its sequence number). */
  "session.event": { type: "session.event"; sessionId: string; seq: number; event: SessionEvent };
}

/** Any bus event: a union discriminated by `type`. */
export type BusEvent = BusEvents[keyof BusEvents];

export type EventHandler<T> = (payload: T) => void;

/** The daemon's bus of lifecycle events (`EventBusToken`): handlers run synchronously, in the emitter's call. */
export interface EventBus {
  on<K extends keyof BusEvents>(type: K, handler: EventHandler<BusEvents[K]>): Disposable;
  emit(event: BusEvent): void;
}

/** Synchronous fan-out with failure isolation: a throwing handler is logged and the others still run. */
export class SyncEventBus implements EventBus {
  private readonly handlers = new Map<string, Set<EventHandler<never>>>();

  constructor(private readonly log: Logger) {}

  on<K extends keyof BusEvents>(type: K, handler: EventHandler<BusEvents[K]>): Disposable {
    let set = this.handlers.get(type);
    if (!set) {
      set = new Set();
      this.handlers.set(type, set);
    }
    set.add(handler as EventHandler<never>);
    return toDisposable(() => set.delete(handler as EventHandler<never>));
  }

  emit(event: BusEvent): void {
    const set = this.handlers.get(event.type);
    if (!set) return;
    for (const h of set) {
      try {
        (h as EventHandler<BusEvent>)(event);
      } catch (err) {
        this.log.error({ err, event: event.type }, "event handler failed");
      }
    }
  }
}
