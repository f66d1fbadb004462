import { EPHEMERAL_TYPES, isoNow } from "./event-log-common.js";
import type { SessionEvent } from "./events.js";
import type { UnnumberedEvent } from "./store.js";

/** Events of one session that wait for the database at most; beyond, the oldest deltas are dropped. */
export const MAX_WAITING = 5000;

/** An event of this daemon waiting for its number, with its wire object (for the in-process bus). */
export interface Outgoing extends UnnumberedEvent {
  wire: Record<string, unknown>;
}

/** A session's event as SharedEventLog queues it: its frame's JSON around the number it will get. */
export function outgoingSessionEvent(sessionId: string, event: SessionEvent): Outgoing {
  const wire: Record<string, unknown> = { type: event.type, sessionId, seq: 0 };
  const rest: Record<string, unknown> = {};
  for (const key in event) {
    if (key === "type" || key === "seq" || key === "sessionId") continue;
    const value = (event as Record<string, unknown>)[key];
    wire[key] = value;
    rest[key] = value;
  }
  const head = `{"type":${JSON.stringify(event.type)},"sessionId":${JSON.stringify(sessionId)},"seq":`;
  return {
    ts: isoNow(),
    type: event.type,
    head,
    tail: tailOf(rest),
    ephemeral: EPHEMERAL_TYPES.has(event.type),
    wire,
  };
}

/** A feed event, likewise. */
export function outgoingFeedEvent(event: SessionEvent & { sessionId: string }): Outgoing {
  const { type, ...rest } = event;
  const { seq: _seq, ...payload } = rest as Record<string, unknown>;
  const wire = { type, seq: 0, ...payload };
  return {
    ts: isoNow(),
    type,
    head: `{"type":${JSON.stringify(type)},"seq":`,
    tail: tailOf(payload),
    ephemeral: false,
    wire,
  };
}

/**
 * A session's queue waiting for the database, bounded: a long outage must not hold a turn's every delta in memory.
 * Beyond MAX_WAITING, the oldest deltas (tokens, thinking) go first; the messages they add up to are not deltas,
 * and are kept. The queue itself when nothing is dropped.
 */
export function boundWaiting(queue: Outgoing[]): Outgoing[] {
  if (queue.length <= MAX_WAITING) return queue;
  let drop = queue.length - MAX_WAITING;
  return queue.filter((e) => !(e.ephemeral && drop-- > 0));
}

/** The JSON of the payload after the sequence number: `,"k":v...}` (or `}` when there is none). */
function tailOf(payload: Record<string, unknown>): string {
  const body = JSON.stringify(payload);
  return body === "{}" ? "}" : `,${body.slice(1)}`;
}
