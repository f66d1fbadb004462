import { expect } from "chai";
import type { StoredEvent } from "../core/index.js";
import { pendingFromEvents } from "../plugins/agent/remote-decisions.js";

let seq = 0;
const ev = (type: string, body: Record<string, unknown> = {}): StoredEvent => {
  seq++;
  return { seq, ts: "2026-01-01T00:00:00.000Z", type, json: JSON.stringify({ type, sessionId: "s", seq, ...body }) };
};

/** What a daemon that does not run a turn shows as its pending decisions: folded from the turn's stored events. */
describe("pendingFromEvents: a remote turn's decisions from its events", () => {
  it("keeps the commands not yet settled and the open question; an end settles all", () => {
    const ask = (id: string) => ev("bash_confirm", { id, tool: "bash", command: `rm ${id}`, reason: "dangerous" });
    const events = [
      ask("c1"),
      ev("end", { reason: "stop" }),
      ask("c2"),
      ask("c3"),
      ev("bash_confirm_resolved", { id: "c2", allowed: true, by: "user" }),
      ev("decision_state", { question: { id: "q1", questions: [{ question: "Which?" }] } }),
    ];
    const out = pendingFromEvents(events);
    expect(out.pendingConfirmations).to.deep.equal([{ id: "c3", tool: "bash", command: "rm c3", reason: "dangerous" }]);
    expect(out.question).to.deep.equal({ id: "q1", questions: [{ question: "Which?" }] });
    expect(pendingFromEvents([...events, ev("decision_state"), ev("end")])).to.deep.equal({});
  });
});
