import { defineRoute, SessionIdParams, T } from "../../../core/index.js";
import { type SessionRouteDeps, tags } from "./shared.js";

export function unshareSessionRoute({ svc }: SessionRouteDeps) {
  return defineRoute({
    method: "DELETE",
    path: "/sessions/:id/share",
    operationId: "unshareSession",
    summary: "Revoke the share link (200 with ok even when the session was not shared)",
    tags,
    params: SessionIdParams,
    responses: { 200: T.Object({ ok: T.Boolean() }, { title: "RevokeShareResult" }) },
    handler: async ({ params }) => {
      await svc().unshare(params.id);
      return { body: { ok: true as const } };
    },
  });
}
