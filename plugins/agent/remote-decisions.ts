import type { StoredEvent } from "../../core/index.js";

/** How far back a non-owner reads a running turn's stored events for its pending decisions. */
export const DECISION_WINDOW = 500;

/**
 * The decisions a turn another daemon runs waits for, as its stored (durable) events tell them: the commands asked
 * about and not yet settled, and the open question. A turn's `end` settles everything before it. The shape is the
 * owner's own (`pendingConfirmations`, `question`), so a client of any daemon sees the same first frame.
 */
export function pendingFromEvents(events: readonly StoredEvent[]): Record<string, unknown> {
  const confirmations = new Map<string, Record<string, unknown>>();
  let question: unknown;
  for (const e of events) {
    let ev: Record<string, unknown>;
    try {
      ev = JSON.parse(e.json) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (e.type === "bash_confirm" && typeof ev.id === "string") {
      const { type: _t, sessionId: _s, seq: _q, ...info } = ev;
      confirmations.set(ev.id, info);
    } else if (e.type === "bash_confirm_resolved" && typeof ev.id === "string") {
      confirmations.delete(ev.id);
    } else if (e.type === "decision_state") {
      question = ev.question;
    } else if (e.type === "end") {
      confirmations.clear();
      question = undefined;
    }
  }
  const out: Record<string, unknown> = {};
  if (question !== undefined) out.question = question;
  if (confirmations.size) out.pendingConfirmations = [...confirmations.values()];
  return out;
}
