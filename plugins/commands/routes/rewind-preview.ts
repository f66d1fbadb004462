import { defineRoute, MAX_SEQ, SessionIdParams, T } from "../../../core/index.js";
import type { CommandEnv } from "../env.js";
import { previewRewind } from "../rewind.js";
import { tags } from "./shared.js";

const RewindPreviewSchema = T.Object(
  {
    messageSeq: T.Integer(),
    available: T.Boolean({ description: "false: the files cannot be restored (reason says why)" }),
    reason: T.Optional(T.String()),
    created: T.Array(T.String(), { description: "Would be removed" }),
    modified: T.Array(T.String(), { description: "Would be written back" }),
    deleted: T.Array(T.String(), { description: "Would be recreated" }),
  },
  { title: "RewindPreview" },
);

export function rewindPreviewRoute(env: CommandEnv) {
  return defineRoute({
    method: "GET",
    path: "/sessions/:id/rewind",
    operationId: "previewRewind",
    summary: "Which files a rewind to a user message would change",
    tags,
    params: SessionIdParams,
    query: T.Object({ messageSeq: T.Integer({ minimum: 0, maximum: MAX_SEQ }) }),
    responses: { 200: RewindPreviewSchema },
    handler: async ({ params, query }) => {
      const rec = await env.sessions().require(params.id);
      return { body: await previewRewind(env, rec, query.messageSeq) };
    },
  });
}
