import { defineRoute, OkSchema, SessionIdParams } from "../../../core/index.js";
import { type SessionRouteDeps, tags } from "./shared.js";

export function deleteSessionRoute({ svc }: SessionRouteDeps) {
  return defineRoute({
    method: "DELETE",
    path: "/sessions/:id/permanent",
    operationId: "deleteSession",
    summary: "Delete a session and everything stored for it",
    tags,
    params: SessionIdParams,
    responses: { 200: OkSchema },
    handler: async ({ params }) => {
      await svc().deletePermanently(params.id);
      return { body: { ok: true as const } };
    },
  });
}
