import type { SessionService } from "../../core/index.js";

/**
 * Ends a turn its daemon could not end (it crashed, or a team's daemon died with it): a notice, then exactly the
 * `end{reason:"aborted", recovered:true}` and the idle status every client of the session gets.
 */
export function endInterrupted(sessions: SessionService, sessionId: string, why: string): void {
  sessions.publish(sessionId, { type: "notice", message: why });
  sessions.publish(sessionId, { type: "end", reason: "aborted", recovered: true });
  sessions.publish(sessionId, { type: "status", status: "idle" });
}
