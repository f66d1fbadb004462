import type { EndReason } from "./events.js";
import type { SessionRecord, SessionStatus } from "./session-types.js";
import { createToken } from "./tokens.js";

/**
 * What the session layer needs from whoever runs turns (the agent loop plugin). Until one is provided every
 * session is idle and nothing can be aborted.
 */
export interface TurnController {
  status(sessionId: string): SessionStatus;
  /** Ids of sessions with a running turn. */
  running(): string[];
  /** Epoch ms of the running turn's start, or null. */
  turnStartedAt(sessionId: string): number | null;
  /** Live, not yet persisted blocks of the running turn (null when nothing is streaming). */
  streaming(sessionId: string): unknown[] | null;
  /**
   * Optional: the decisions a turn that another daemon of a team runs waits for (read from the session's stored
   * events), or undefined when no other daemon runs the session's turn (then `pending` says).
   */
  remotePending?(rec: SessionRecord): Promise<Record<string, unknown> | undefined>;
  /**
   * The running turn's pending decisions (its question, confirmations), shown in GET /sessions/{id} and the first SSE
   * frame. A plan transition is the session layer's (it is kept in the record).
   */
  pending(rec: SessionRecord): Record<string, unknown>;
  /** Ends the running turn (if any) with `end{reason:"aborted"}` and resolves once it has ended. */
  abort(sessionId: string, why: "user" | "unload" | "delete" | "shutdown"): Promise<void>;
  /** Aborts every running turn (daemon shutdown). */
  abortAll(why: "shutdown"): Promise<void>;
}

export const TurnControllerToken = createToken<TurnController>("turn-controller");

export interface ChatInput {
  text: string;
  images?: string[];
  clientMessageId?: string;
  /** Iteration budget for this turn (/goal). */
  budget?: number;
}

export type ChatOutcome = "started" | "steered" | "queued" | "duplicate";

/** The agent loop as other plugins drive it (the `agent` plugin provides it): send, steer and queue messages. */
export interface TurnService extends TurnController {
  /** Starts a turn, or steers or queues the message when one is running (the `POST /sessions/{id}/chat` rules). */
  chat(rec: SessionRecord, input: ChatInput): Promise<ChatOutcome>;
  /** Injects text into the running turn (a new turn when none runs). */
  steer(rec: SessionRecord, text: string, clientMessageId?: string): Promise<ChatOutcome>;
  /** Queues text as the next turn (now when none runs). */
  followup(rec: SessionRecord, text: string, clientMessageId?: string): Promise<ChatOutcome>;
  /** Drops the session's queued follow-ups; how many there were. */
  clearFollowups(sessionId: string): number;
}

export const TurnManagerToken = createToken<TurnService>("turn-manager");

export const idleTurns: TurnController = {
  status: () => "idle",
  running: () => [],
  turnStartedAt: () => null,
  streaming: () => null,
  pending: () => ({}),
  abort: async () => {},
  abortAll: async () => {},
};

export type { EndReason };
