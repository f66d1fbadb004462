import { defineRoute, SessionIdParams, T } from "../../../core/index.js";
import { type SessionRouteDeps, tags } from "./shared.js";

export function renameSessionRoute({ svc }: SessionRouteDeps) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/rename",
    operationId: "renameSession",
    summary: "Rename a session (trimmed, at most 200 characters; empty clears the title)",
    tags,
    params: SessionIdParams,
    body: T.Object({ title: T.String({ maxLength: 10_000 }) }, { additionalProperties: false }),
    responses: { 200: T.Object({ ok: T.Literal(true), title: T.String() }, { title: "RenameResult" }) },
    handler: async ({ params, body }) => ({
      body: { ok: true as const, title: (await svc().rename(params.id, body.title)).title ?? "" },
    }),
  });
}
