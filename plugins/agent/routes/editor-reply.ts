import { defineRoute, OkSchema, SessionIdParams, T } from "../../../core/index.js";
import { type TurnRouteDeps, tags } from "./shared.js";

export function editorReplyRoute({ svc, turns }: TurnRouteDeps) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/editor/reply",
    operationId: "replyEditorRequest",
    summary: "Answer an editor_fs_request: the file's text for a read, nothing for a write, or the editor's error",
    tags,
    params: SessionIdParams,
    body: T.Object(
      {
        id: T.String({ minLength: 1, maxLength: 100 }),
        content: T.Optional(T.String({ maxLength: 50 * 1024 * 1024 })),
        error: T.Optional(T.String({ maxLength: 10_000 })),
      },
      { title: "EditorReply", additionalProperties: false },
    ),
    bodyLimit: 52 * 1024 * 1024,
    errors: [409],
    responses: { 202: OkSchema },
    handler: async ({ params, body }) => {
      await svc().require(params.id);
      turns().editors.answer(params.id, body.id, body);
      return { status: 202, body: { ok: true as const } };
    },
  });
}
