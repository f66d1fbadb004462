import { mkdir } from "node:fs/promises";
import path from "node:path";
import { ApiError, defineRoute, SessionIdParams, T } from "../../../core/index.js";
import { attachmentFiles, type InputsOptions, tags, tooLarge, writeNew } from "../inputs.js";
import { checkExtension, checkMime, executableFormat, parseDataUrl, sanitizeName } from "../upload-policy.js";

export function uploadAttachmentRoute(opts: InputsOptions) {
  const { dirOf } = attachmentFiles(opts);
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/inputs/upload",
    operationId: "uploadAttachment",
    summary: "Attach a file to the session (stored under a collision-free name, never overwriting)",
    description:
      `Decoded size at most ${opts.maxUploadBytes} bytes (413 above). Executables, libraries, installers and ` +
      "shell/OS scripts are refused (400) by extension, declared type and content. The name is reduced to a " +
      'plain file name; an existing name gets " (1)", " (2)"... before its extension.',
    tags,
    params: SessionIdParams,
    body: T.Object(
      {
        name: T.String({ minLength: 1, maxLength: 1024 }),
        dataUrl: T.String({ minLength: 5, description: "The content as a data: URL (base64 or percent-encoded)" }),
      },
      { title: "AttachmentUpload" },
    ),
    // Base64 grows the payload by 4/3; the rest is room for the name and the JSON around it.
    bodyLimit: Math.ceil((opts.maxUploadBytes * 4) / 3) + 64 * 1024,
    responses: {
      200: T.Object(
        { ok: T.Literal(true), name: T.String(), path: T.String(), size: T.Integer(), mimeType: T.String() },
        { title: "UploadedAttachment" },
      ),
    },
    handler: async ({ params, body }) => {
      const dir = await dirOf(params.id);
      const name = sanitizeName(body.name);
      checkExtension(name);
      const data = parseDataUrl(body.dataUrl);
      checkMime(data.mime);
      tooLarge(data.estimatedBytes, opts.maxUploadBytes);
      const bytes = data.decode();
      tooLarge(bytes.length, opts.maxUploadBytes);
      const format = executableFormat(bytes);
      if (format) throw ApiError.badRequest(`Executable content cannot be attached (${format} binary)`);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const stored = await writeNew(dir, name, bytes);
      const saved = { name: stored, path: path.join(dir, stored), size: bytes.length, mimeType: data.mime };
      return { body: { ok: true as const, ...saved } };
    },
  });
}
