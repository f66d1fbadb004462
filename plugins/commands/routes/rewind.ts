import { defineRoute, MAX_SEQ, SessionIdParams, T } from "../../../core/index.js";
import type { CommandEnv } from "../env.js";
import { rewind } from "../rewind.js";
import { RestoreSchema, RewindResultSchema, tags } from "./shared.js";

export const RewindRequestSchema = T.Object(
  {
    messageSeq: T.Integer({ minimum: 0, maximum: MAX_SEQ, description: "A user message's seq" }),
    restore: T.Optional(RestoreSchema),
  },
  { title: "RewindRequest", additionalProperties: false },
);

export function rewindRoute(env: CommandEnv) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/rewind",
    operationId: "rewindSession",
    summary: "Rewind to a user message: its turn's files, the conversation from it on, or both",
    description:
      "404 for an unknown messageSeq, 400 when it is not a user message or did not start a turn, 409 while a " +
      'turn runs and when the files cannot be restored (code "checkpoint_pruned" or "checkpoint_missing"). ' +
      "A checkpoint of the files and the dropped messages are kept: POST /sessions/{id}/redo (or /redo) undoes " +
      "the rewind once. Emits a rewind event (with the recent history) and a session_update.",
    tags,
    params: SessionIdParams,
    body: RewindRequestSchema,
    errors: [409],
    responses: { 200: RewindResultSchema },
    handler: async ({ params, body }) => {
      const rec = await env.sessions().require(params.id);
      return { body: await rewind(env, rec, body.messageSeq, body.restore ?? "both") };
    },
  });
}
