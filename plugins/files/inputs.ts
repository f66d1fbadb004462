import { rmSync } from "node:fs";
import { lstat, mkdir, readdir, realpath, rm, unlink } from "node:fs/promises";
import path from "node:path";
import {
  type AnyRoute,
  ApiError,
  defineRoute,
  isInside,
  OkSchema,
  SessionIdParams,
  type SessionService,
  T,
  withDirInside,
  writeFileInside,
} from "../../core/index.js";
import { BinaryResponse, DownloadQueryFields, fileDownload, wantsInline } from "./download.js";
import { checkBareName, fsError, realpathOrUndefined } from "./paths.js";
import { checkExtension, checkMime, executableFormat, parseDataUrl, sanitizeName } from "./upload-policy.js";

/** Collision suffixes tried before giving up: `a.txt`, `a (1).txt` ... `a (999).txt`. */
const MAX_COLLISIONS = 1000;

const AttachmentSchema = T.Object(
  {
    name: T.String(),
    size: T.Integer({ description: "Bytes" }),
    path: T.String({ description: "Absolute path on the daemon's machine (what the agent is told to read)" }),
    modifiedAt: T.String({ format: "date-time" }),
  },
  { title: "Attachment" },
);

const NameQuery = T.Object({
  name: T.Optional(T.String({ minLength: 1, maxLength: 255, description: "The attachment's file name" })),
  path: T.Optional(T.String({ minLength: 1, maxLength: 255, description: "Alias of name" })),
  ...DownloadQueryFields,
});

export interface InputsOptions {
  sessions: () => SessionService;
  /** `<home>/inputs`: one flat directory per session below it. */
  inputsRoot: string;
  maxUploadBytes: number;
}

/** `a.txt`, `a (1).txt`, `a (2).txt`... (the suffix goes before the extension; dot-less names get it at the end). */
export function candidateName(name: string, n: number): string {
  if (n === 0) return name;
  const ext = path.extname(name);
  return `${name.slice(0, name.length - ext.length)} (${n})${ext}`;
}

export function inputsRoutes(opts: InputsOptions): AnyRoute[] {
  const tags = ["attachments"];
  const dirOf = async (id: string) => path.join(opts.inputsRoot, (await opts.sessions().require(id)).id);

  /** An existing attachment by name: a regular file directly inside the session's attachments directory. */
  const existing = async (id: string, q: { name?: string; path?: string }): Promise<string> => {
    const dir = await dirOf(id);
    const raw = q.name ?? q.path;
    if (!raw) throw ApiError.badRequest('Give the attachment in "name"');
    const name = checkBareName(raw, "attachment name");
    const realDir = await realpathOrUndefined(dir);
    if (!realDir) throw ApiError.notFound(`Attachment not found: ${name}`);
    const abs = path.join(realDir, name);
    const st = await lstat(abs).catch((err) => {
      throw err?.code === "ENOENT" ? ApiError.notFound(`Attachment not found: ${name}`) : fsError(err, name);
    });
    if (!st.isFile() || !isInside(realDir, abs)) throw ApiError.badRequest(`Not an attachment file: ${name}`);
    return abs;
  };

  return [
    defineRoute({
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
    }),
    defineRoute({
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
    }),
    defineRoute({
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
    }),
    defineRoute({
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
    }),
  ];
}

function tooLarge(bytes: number, max: number): void {
  if (bytes > max) throw new ApiError(413, `Attachment too large: ${bytes} bytes (limit ${max} bytes)`);
}

/** Creates the file exclusively (O_EXCL), moving to the next free name on a collision: never overwrites, no race. */
async function writeNew(dir: string, name: string, bytes: Buffer): Promise<string> {
  const realDir = await realpath(dir);
  for (let n = 0; n < MAX_COLLISIONS; n++) {
    const candidate = candidateName(name, n);
    const abs = path.join(dir, candidate);
    try {
      await writeFileInside([realDir], path.join(realDir, candidate), bytes, { exclusive: true, mode: 0o600 });
      return candidate;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") continue;
      // The open succeeded (it is ours) and the write failed, e.g. a full disk: leave no partial file behind.
      await rm(abs, { force: true });
      throw fsError(err, candidate);
    }
  }
  throw ApiError.conflict(`Too many attachments named ${name}`);
}

/**
 * Removes a session's attachments (the session was deleted). Synchronous on purpose: the directory is small and
 * flat, and the attachments are gone by the time DELETE /sessions/{id}/permanent answers.
 */
export function removeSessionInputs(inputsRoot: string, sessionId: string): void {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(sessionId)) return;
  rmSync(path.join(inputsRoot, sessionId), { recursive: true, force: true });
}
