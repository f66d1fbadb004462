import { type Disposable, toDisposable } from "./disposable.js";
import type { Logger } from "./logger.js";
import type { SessionSummary } from "./session-types.js";

/** A session event as it goes on the wire: `type` plus payload fields. `sessionId` and `seq` are added by the log. */
export interface SessionEvent {
  type: string;
  [field: string]: unknown;
}

export type EndReason = "stop" | "aborted" | "error" | "disconnected";

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
  "turn.end": { sessionId: string; reason: EndReason };
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
