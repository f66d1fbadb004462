import { defineRoute, OkSchema, SessionIdParams, T } from "../../../core/index.js";
import { reply, type TurnRouteDeps, tags } from "./shared.js";

export function questionRoute({ svc, team }: TurnRouteDeps) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/question",
    operationId: "answerQuestion",
    summary: "Answer the pending question (one entry per question; a list for multi-select)",
    tags,
    params: SessionIdParams,
    body: T.Object(
      {
        values: T.Array(
          T.Union([T.String({ maxLength: 10_000 }), T.Array(T.String({ maxLength: 1000 }), { maxItems: 10 })]),
          { minItems: 1, maxItems: 5 },
        ),
      },
      { title: "QuestionAnswer", additionalProperties: false },
    ),
    errors: [409],
    responses: { 202: OkSchema },
    handler: async ({ params, body }) => {
      await svc().require(params.id);
      return reply(await team.control(params.id, "question", body));
    },
  });
}
