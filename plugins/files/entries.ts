import type { Dirent } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import { isInside, T } from "../../core/index.js";

/**
 * `dir` / `file`; a symbolic link shows the type of its target when the target stays inside the root, and
 * `symlink` when it is dangling or points outside (it cannot be opened through the API); `other` for sockets, fifos...
 */
export type EntryType = "dir" | "file" | "symlink" | "other";
export const EntryTypeSchema = T.Union([T.Literal("dir"), T.Literal("file"), T.Literal("symlink"), T.Literal("other")]);

export interface TypedEntry {
  type: EntryType;
  /** Present for a symbolic link. */
  symlink?: true;
  /** Bytes, for files. */
  size?: number;
}

export async function typeOf(dirent: Dirent, abs: string, roots: string[], withSize: boolean): Promise<TypedEntry> {
  if (dirent.isDirectory()) return { type: "dir" };
  if (dirent.isFile()) return withSize ? { type: "file", size: await sizeOf(abs) } : { type: "file" };
  if (!dirent.isSymbolicLink()) return { type: "other" };
  const target = await realpath(abs).catch(() => undefined);
  if (!target || !roots.some((r) => isInside(r, target))) return { type: "symlink", symlink: true };
  const st = await stat(target).catch(() => undefined);
  if (st?.isDirectory()) return { type: "dir", symlink: true };
  if (st?.isFile()) return withSize ? { type: "file", symlink: true, size: st.size } : { type: "file", symlink: true };
  return { type: "other", symlink: true };
}

async function sizeOf(abs: string): Promise<number | undefined> {
  return (await stat(abs).catch(() => undefined))?.size;
}

/** Directories first, then by name (locale-aware, numeric). */
export function byDirThenName(a: { name: string; type: EntryType }, b: { name: string; type: EntryType }): number {
  const da = a.type === "dir" ? 0 : 1;
  const db = b.type === "dir" ? 0 : 1;
  return da - db || a.name.localeCompare(b.name, undefined, { numeric: true });
}

export function joinRel(dirRel: string, name: string): string {
  return dirRel === "" || dirRel === "." ? name : `${dirRel}/${name}`;
}
