import { defineRoute, OkSchema, SessionIdParams, T } from "../../../core/index.js";
import { reply, type TurnRouteDeps, tags } from "./shared.js";

export function planTransitionRoute({ svc, team }: TurnRouteDeps) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/plan-transition",
    operationId: "planTransition",
    summary: "Accept the finished plan (its open steps become todos), or keep planning",
    description:
      "`done` accepts the plan: its open steps become the session's todos. `continue` declines the choice for " +
      "now: the session stays in plan mode and the pending choice is cleared for every client (the plan file " +
      "is kept; the next plan_done asks again). Either way a `decision_state` event without `planTransition` " +
      "follows, and the session's summary no longer carries `waiting: plan`.",
    tags,
    params: SessionIdParams,
    body: T.Object(
      { kind: T.Union([T.Literal("done"), T.Literal("continue")]) },
      { title: "PlanTransitionRequest", additionalProperties: false },
    ),
    errors: [409],
    responses: { 202: OkSchema },
    handler: async ({ params, body }) => {
      const rec = await svc().require(params.id);
      return reply(await team.control(params.id, "plan", body, rec));
    },
  });
}
