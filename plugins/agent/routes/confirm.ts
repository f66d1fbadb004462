import { defineRoute, OkSchema, SessionIdParams, T } from "../../../core/index.js";
import { reply, type TurnRouteDeps, tags } from "./shared.js";

const RememberSchema = T.Object(
  {
    scope: T.Union([T.Literal("session"), T.Literal("project"), T.Literal("global")]),
    pattern: T.Optional(
      T.String({
        minLength: 1,
        maxLength: 1000,
        description: "The rule's pattern; default the event's suggestedRule (send a narrower one to narrow it)",
      }),
    ),
  },
  {
    title: "RememberDecision",
    additionalProperties: false,
    description: "Saves the answer as a rule (allow, or deny when `allow` is false) before it is applied",
  },
);

export function confirmRoute({ svc, team }: TurnRouteDeps) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/bash-confirm",
    operationId: "confirmCommand",
    summary: "Allow or block a command announced by a bash_confirm event, optionally remembering the answer as a rule",
    tags,
    params: SessionIdParams,
    body: T.Object(
      { id: T.String({ minLength: 1, maxLength: 100 }), allow: T.Boolean(), remember: T.Optional(RememberSchema) },
      { title: "CommandConfirmation", additionalProperties: false },
    ),
    errors: [409],
    responses: { 202: OkSchema },
    handler: async ({ params, body }) => {
      const rec = await svc().require(params.id);
      return reply(await team.control(params.id, "confirm", body, rec));
    },
  });
}
