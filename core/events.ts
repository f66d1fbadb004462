import type { ToolResult } from "./contributions.js";
import { type Disposable, toDisposable } from "./disposable.js";
import type { Logger } from "./logger.js";
import type { SessionSummary } from "./session-types.js";

/** A session event as it goes on the wire: `type` plus payload fields. `sessionId` and `seq` are added by the log. */
export interface SessionEvent {
  type: string;
  [field: string]: unknown;
}

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

/**
 * The in-process bus. Plugins may add their own event types by declaration merging:
 * `declare module "agentd" { interface BusEvents { "my.event": {...} } }`.
 */
export interface BusEvents {
  "session.created": { session: SessionSummary };
  "session.updated": { session: SessionSummary };
  "session.deleted": { sessionId: string; session: SessionSummary };
  /** Every event appended to a session's log, after it got its sequence number. */
  "session.event": { sessionId: string; seq: number; event: SessionEvent };
  /** A turn was accepted and is about to run (project resources such as MCP servers may be prepared here). */
  "turn.start": { sessionId: string; cwd: string };
  "turn.end": { sessionId: string; reason: EndReason };
  /**
   * `/reload` ran: project resources (skills, rules, personas, context files) were re-read; plugins holding their
   * own copies (MCP servers, SSH hosts) re-read theirs. `sessionId` is absent for a global reload.
   */
  "resources.reload": { cwd: string; sessionId?: string };
  /** Before a tool call with valid arguments runs; a verdict with `block` vetoes it. */
  "tool.before": ToolHookEvent;
  /** After a tool call ran, before its result is recorded; verdicts may add feedback for the model. */
  "tool.after": ToolHookEvent & { result: ToolResult };
}

export type EventHandler<T> = (payload: T) => void;

/** Synchronous fan-out with failure isolation: a throwing handler is logged and the others still run. */
export class EventBus {
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

  emit<K extends keyof BusEvents>(type: K, payload: BusEvents[K]): void {
    const set = this.handlers.get(type);
    if (!set) return;
    for (const h of set) {
      try {
        (h as EventHandler<BusEvents[K]>)(payload);
      } catch (err) {
        this.log.error({ err, event: type }, "event handler failed");
      }
    }
  }
}
