/*
 * Path policy of the files routes
 * -------------------------------
 * 1. A client path is relative to a root (the session's working directory, the attachments directory, a browse
 *    root). `..` segments and NUL bytes are refused outright (400), never normalised away.
 * 2. What is opened, listed or downloaded is resolved with realpath, so a symbolic link inside the root that points
 *    outside it is refused (400), exactly like a path that names the outside directly.
 * 3. What is deleted or renamed is the entry itself: its parent directory is realpath'd and confined, the last
 *    component is taken with lstat, so deleting a symbolic link removes the link and never what it points to.
 * 4. Nothing is ever overwritten: an existing destination is a 409.
 */
import { lstat, realpath } from "node:fs/promises";
import path from "node:path";
import { ApiError, isInside } from "../../core/index.js";

/** "/"-separated path of `abs` relative to `root` ("." for the root itself). */
export function relativeTo(root: string, abs: string): string {
  const rel = path.relative(root, abs);
  return rel === "" ? "." : rel.split(path.sep).join("/");
}

export async function realpathOrUndefined(p: string): Promise<string | undefined> {
  try {
    return await realpath(p);
  } catch {
    return undefined;
  }
}

/**
 * Splits a client path into segments relative to `root`. An absolute path is accepted when it lies (lexically)
 * inside one of `aliases` (the root as stored and as realpath'd). Returns [] for the root itself.
 */
export function segmentsOf(input: string, aliases: string[]): string[] {
  if (input.includes("\0")) throw ApiError.badRequest("Invalid path: it contains a NUL byte");
  let rel = input.trim();
  if (path.isAbsolute(rel)) {
    const normal = path.resolve(rel);
    const base = aliases.find((a) => isInside(a, normal));
    if (!base || hasDotDot(rel)) throw ApiError.badRequest(`Path outside the allowed directory: ${input}`);
    rel = path.relative(base, normal);
  }
  const segs = rel.split("/").filter((s) => s !== "" && s !== ".");
  if (segs.includes("..")) throw ApiError.badRequest(`Invalid path: ".." is not allowed (${input})`);
  return segs;
}

function hasDotDot(p: string): boolean {
  return p.split("/").includes("..");
}

/** A bare entry name (rename target, new folder): no separators, not "." or "..", no control characters. */
export function checkBareName(name: string, what = "name"): string {
  const n = name.trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
  if (!n || n === "." || n === ".." || /[/\0]/.test(n) || /[\x00-\x1f\x7f]/.test(n)) {
    throw ApiError.badRequest(`Invalid ${what}: ${JSON.stringify(name)} (a plain name without "/" is expected)`);
  }
  if (Buffer.byteLength(n) > 255) throw ApiError.badRequest(`Invalid ${what}: longer than 255 bytes`);
  return n;
}

/** Follows the path (rule 2): the real absolute path, which must exist and stay inside `root` (a realpath). */
export async function resolveExisting(root: string, segs: string[], shown: string): Promise<string> {
  const wanted = path.join(root, ...segs);
  let abs: string;
  try {
    abs = await realpath(wanted);
  } catch (err) {
    throw fsError(err, shown);
  }
  if (!isInside(root, abs)) throw ApiError.badRequest(`Path resolves outside the allowed directory: ${shown}`);
  return abs;
}

export interface Entry {
  /** Real parent directory (inside the root) joined with the entry's own name. */
  abs: string;
  parent: string;
  name: string;
  stats: Awaited<ReturnType<typeof lstat>>;
}

/** Takes the entry itself (rule 3): the parent is confined with realpath, the last component is lstat'ed. */
export async function resolveEntry(root: string, segs: string[], shown: string): Promise<Entry> {
  const name = segs.at(-1);
  if (name === undefined) throw ApiError.badRequest("Refusing to operate on the root directory itself");
  const parent = await resolveExisting(root, segs.slice(0, -1), shown);
  const abs = path.join(parent, name);
  try {
    return { abs, parent, name, stats: await lstat(abs) };
  } catch (err) {
    throw fsError(err, shown);
  }
}

/** An fs failure as the API error a client can act on. */
export function fsError(err: unknown, shown: string): ApiError {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  switch (code) {
    case "ENOENT":
      return ApiError.notFound(`Not found: ${shown}`);
    case "ENOTDIR":
      return ApiError.badRequest(`Not a directory: ${shown}`);
    case "EISDIR":
      return ApiError.badRequest(`Is a directory: ${shown}`);
    case "EEXIST":
      return ApiError.conflict(`Already exists: ${shown}`);
    case "ENOTEMPTY":
      return ApiError.conflict(`Directory is not empty: ${shown}`);
    case "EACCES":
    case "EPERM":
      return ApiError.badRequest(`Permission denied: ${shown}`);
    case "EESCAPE":
      return ApiError.badRequest(`Path resolves outside the allowed directory: ${shown}`);
    case "ELOOP":
      return ApiError.badRequest(`Too many symbolic links: ${shown}`);
    case "ENAMETOOLONG":
      return ApiError.badRequest(`Name too long: ${shown}`);
    case "EINVAL":
      return ApiError.badRequest(`Invalid operation on ${shown}`);
    case "EXDEV":
      return ApiError.badRequest(`Cannot move across file systems: ${shown}`);
    default:
      return ApiError.badRequest(`${shown}: ${code ?? "file system error"}`);
  }
}
