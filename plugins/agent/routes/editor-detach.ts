import { defineRoute, OkSchema, SessionIdParams } from "../../../core/index.js";
import { type TurnRouteDeps, tags } from "./shared.js";

export function editorDetachRoute({ svc, turns }: TurnRouteDeps) {
  return defineRoute({
    method: "DELETE",
    path: "/sessions/:id/editor",
    operationId: "detachEditor",
    summary: "Detach the editor; the file tools use the disk again (200 also when none is attached)",
    tags,
    params: SessionIdParams,
    responses: { 200: OkSchema },
    handler: async ({ params }) => {
      await svc().require(params.id);
      turns().editors.detach(params.id);
      return { body: { ok: true as const } };
    },
  });
}
