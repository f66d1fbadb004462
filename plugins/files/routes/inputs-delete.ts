import { unlink } from "node:fs/promises";
import path from "node:path";
import { defineRoute, OkSchema, SessionIdParams, withDirInside } from "../../../core/index.js";
import { attachmentFiles, type InputsOptions, NameQuery, tags } from "../inputs.js";
import { fsError } from "../paths.js";

export function deleteAttachmentRoute(opts: InputsOptions) {
  const { existing } = attachmentFiles(opts);
  return defineRoute({
    method: "DELETE",
    path: "/sessions/:id/inputs",
    operationId: "deleteAttachment",
    summary: "Delete an attachment",
    tags,
    params: SessionIdParams,
    query: NameQuery,
    responses: { 200: OkSchema },
    handler: async ({ params, query }) => {
      const abs = await existing(params.id, query);
      const dir = path.dirname(abs);
      await withDirInside([dir], dir, (d) => unlink(d.at(path.basename(abs)))).catch((err) => {
        throw fsError(err, path.basename(abs));
      });
      return { body: { ok: true as const } };
    },
  });
}
