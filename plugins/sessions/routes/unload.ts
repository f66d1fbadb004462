import { defineRoute, OkSchema, SessionIdParams } from "../../../core/index.js";
import { type SessionRouteDeps, tags } from "./shared.js";

export function unloadSessionRoute({ svc }: SessionRouteDeps) {
  return defineRoute({
    method: "DELETE",
    path: "/sessions/:id",
    operationId: "unloadSession",
    summary: "Unload a session: ends its running turn and closes its streams; stored data is kept",
    tags,
    params: SessionIdParams,
    responses: { 200: OkSchema },
    handler: async ({ params }) => {
      await svc().unload(params.id);
      return { body: { ok: true as const } };
    },
  });
}
