import path from "node:path";
import { defineRoute, SessionIdParams } from "../../../core/index.js";
import { BinaryResponse, fileDownload, wantsInline } from "../download.js";
import { attachmentFiles, type InputsOptions, NameQuery, tags } from "../inputs.js";

export function downloadAttachmentRoute(opts: InputsOptions) {
  const { existing } = attachmentFiles(opts);
  return defineRoute({
    method: "GET",
    path: "/sessions/:id/inputs/download",
    operationId: "downloadAttachment",
    summary: "Download an attachment",
    tags,
    params: SessionIdParams,
    query: NameQuery,
    responses: { 200: BinaryResponse },
    handler: async ({ params, query, signal }) => {
      const abs = await existing(params.id, query);
      return fileDownload([path.dirname(abs)], abs, path.basename(abs), wantsInline(query.inline), signal);
    },
  });
}
