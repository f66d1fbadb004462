import { type SessionService, T, type TurnManager } from "../../../core/index.js";
import type { ControlReply } from "../control.js";
import type { TeamTurns } from "../team.js";

/**
 * What the turn routes use. The controls (chat, steer, follow-up, abort, confirmations, questions, mode, plan
 * transitions) go through `team`: carried out here, or on the daemon that runs the session's turn (a team on one
 * database).
 */
export interface TurnRouteDeps {
  svc: () => SessionService;
  turns: () => TurnManager;
  team: TeamTurns;
}

export const tags = ["turns"];

export const MessageRequest = T.Object(
  {
    message: T.String({ minLength: 1, maxLength: 1_000_000 }),
    clientMessageId: T.Optional(T.String({ minLength: 1, maxLength: 200 })),
  },
  { title: "MessageRequest", additionalProperties: false },
);

export const Accepted = T.Object(
  {
    ok: T.Literal(true),
    status: T.Union([T.Literal("started"), T.Literal("steered"), T.Literal("queued"), T.Literal("duplicate")], {
      description:
        "started: a new turn; steered: injected into the running turn; queued: runs after it; duplicate: clientMessageId already accepted",
    }),
  },
  { title: "TurnAccepted" },
);

/** A control's reply as the route answers it (its schema is the route's response). */
export function reply(r: ControlReply): { status: number; body: never } {
  return { status: r.status, body: r.body as never };
}
