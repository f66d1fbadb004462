import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import { defineRoute, SessionIdParams, T } from "../../../core/index.js";
import { AttachmentSchema, attachmentFiles, type InputsOptions, tags } from "../inputs.js";

export function listAttachmentsRoute(opts: InputsOptions) {
  const { dirOf } = attachmentFiles(opts);
  return defineRoute({
    method: "GET",
    path: "/sessions/:id/inputs",
    operationId: "listAttachments",
    summary: "List the session's attachments (sorted by name)",
    tags,
    params: SessionIdParams,
    responses: {
      200: T.Object(
        {
          dir: T.String({ description: "The attachments directory (absolute)" }),
          entries: T.Array(AttachmentSchema),
        },
        { title: "AttachmentList" },
      ),
    },
    handler: async ({ params }) => {
      const dir = await dirOf(params.id);
      const dirents = await readdir(dir, { withFileTypes: true }).catch(() => []);
      const entries = [];
      for (const d of dirents) {
        if (!d.isFile()) continue;
        const abs = path.join(dir, d.name);
        const st = await lstat(abs).catch(() => undefined);
        if (st) entries.push({ name: d.name, size: st.size, path: abs, modifiedAt: st.mtime.toISOString() });
      }
      entries.sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }));
      return { body: { dir, entries } };
    },
  });
}
