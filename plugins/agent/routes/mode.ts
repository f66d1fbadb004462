import { defineRoute, SessionIdParams, T } from "../../../core/index.js";
import { reply, type TurnRouteDeps, tags } from "./shared.js";

export function modeRoute({ svc, team }: TurnRouteDeps) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/mode",
    operationId: "setMode",
    summary: "Switch between build and plan mode (refused while a turn runs)",
    tags,
    params: SessionIdParams,
    body: T.Object(
      { mode: T.Union([T.Literal("plan"), T.Literal("build")]) },
      { title: "ModeRequest", additionalProperties: false },
    ),
    errors: [409],
    responses: {
      200: T.Object(
        { ok: T.Literal(true), mode: T.Union([T.Literal("plan"), T.Literal("build")]) },
        { title: "ModeResult" },
      ),
    },
    handler: async ({ params, body }) => {
      await svc().require(params.id);
      return reply(await team.control(params.id, "mode", body));
    },
  });
}
