import { rmSync } from "node:fs";
import { lstat, realpath, rm } from "node:fs/promises";
import path from "node:path";
import { ApiError, isInside, type SessionService, T, writeFileInside } from "../../core/index.js";
import { DownloadQueryFields } from "./download.js";
import { checkBareName, fsError, realpathOrUndefined } from "./paths.js";

/** Collision suffixes tried before giving up: `a.txt`, `a (1).txt` ... `a (999).txt`. */
const MAX_COLLISIONS = 1000;

export const AttachmentSchema = T.Object(
  {
    name: T.String(),
    size: T.Integer({ description: "Bytes" }),
    path: T.String({ description: "Absolute path on the daemon's machine (what the agent is told to read)" }),
    modifiedAt: T.String({ format: "date-time" }),
  },
  { title: "Attachment" },
);

export const NameQuery = T.Object({
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

/** A session's attachments directory (`dirOf`) and an existing attachment in it by name (`existing`). */
export function attachmentFiles(opts: InputsOptions) {
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

  return { dirOf, existing };
}

export const tags = ["attachments"];

export function tooLarge(bytes: number, max: number): void {
  if (bytes > max) throw new ApiError(413, `Attachment too large: ${bytes} bytes (limit ${max} bytes)`);
}

/** Creates the file exclusively (O_EXCL), moving to the next free name on a collision: never overwrites, no race. */
export async function writeNew(dir: string, name: string, bytes: Buffer): Promise<string> {
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
