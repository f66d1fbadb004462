import { defineRoute, SessionIdParams, T } from "../../../core/index.js";
import { type SessionRouteDeps, tags } from "./shared.js";

export function pinSessionRoute({ svc }: SessionRouteDeps) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/pin",
    operationId: "pinSession",
    summary: "Pin or unpin a session",
    tags,
    params: SessionIdParams,
    body: T.Object({ pinned: T.Boolean() }, { additionalProperties: false }),
    responses: { 200: T.Object({ ok: T.Literal(true), pinned: T.Boolean() }, { title: "PinResult" }) },
    handler: async ({ params, body }) => ({
      body: { ok: true as const, pinned: (await svc().setPinned(params.id, body.pinned)).pinned },
    }),
  });
}
