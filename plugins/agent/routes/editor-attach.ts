import { defineRoute, OkSchema, SessionIdParams, T } from "../../../core/index.js";
import { type TurnRouteDeps, tags } from "./shared.js";

export function editorAttachRoute({ svc, turns }: TurnRouteDeps) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/editor",
    operationId: "attachEditor",
    summary: "Attach the user's editor: the file tools read and write through it (editor_fs_request events)",
    description:
      "For editor clients (agentd acp) whose editor offers its file system. While attached, read/edit see the " +
      "editor's buffers and write/edit go through it: each access is an `editor_fs_request {id, op, path, " +
      "content?}` event answered with POST /sessions/{id}/editor/reply. An editor that does not answer within " +
      "30 s is detached and the disk is used again. Both flags false detaches.",
    tags,
    params: SessionIdParams,
    body: T.Object(
      { readTextFile: T.Boolean(), writeTextFile: T.Boolean() },
      { title: "EditorAttachRequest", additionalProperties: false },
    ),
    responses: { 200: OkSchema },
    handler: async ({ params, body }) => {
      await svc().require(params.id);
      turns().editors.attach(params.id, body);
      return { body: { ok: true as const } };
    },
  });
}
