import { defineRoute, SessionIdParams } from "../../../core/index.js";
import type { CommandEnv } from "../env.js";
import { redo } from "../rewind.js";
import { RewindResultSchema, tags } from "./shared.js";

export function redoRoute(env: CommandEnv) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/redo",
    operationId: "redoSession",
    summary: "Undo the last rewind (/redo): its files and messages come back; action none when there is none",
    tags,
    params: SessionIdParams,
    errors: [409],
    responses: { 200: RewindResultSchema },
    handler: async ({ params }) => {
      const rec = await env.sessions().require(params.id);
      const out = await redo(env, rec);
      return {
        body: out ?? {
          action: "none" as const,
          filesRestored: false,
          restored: [],
          removed: [],
          messageCount: rec.messageCount,
        },
      };
    },
  });
}
