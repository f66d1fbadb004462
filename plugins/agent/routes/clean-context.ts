import { ApiError, defineRoute, SessionIdParams, T } from "../../../core/index.js";
import { type TurnRouteDeps, tags } from "./shared.js";

export function cleanContextRoute({ svc, team }: TurnRouteDeps) {
  const idle = (id: string, what: string) => {
    if (team.status(id) === "running")
      throw ApiError.conflict(`A turn is running; abort it before ${what}`, { code: "turn_running" });
  };
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/clean-context",
    operationId: "cleanContext",
    summary: "Clear the in-context working set; the visible history stays",
    tags,
    params: SessionIdParams,
    errors: [409],
    responses: {
      200: T.Object({ ok: T.Literal(true), originalTask: T.Optional(T.String()) }, { title: "CleanContextResult" }),
    },
    handler: async ({ params }) => ({
      body: {
        ok: true as const,
        ...(await svc().cleanContext(params.id, () => idle(params.id, "cleaning the context"))),
      },
    }),
  });
}
