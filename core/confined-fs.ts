import { constants, existsSync } from "node:fs";
import { type FileHandle, mkdir, open, readlink, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { isInside } from "./paths.js";

/*
 * Confined file access, safe against a concurrent process swapping a path component for a symbolic link (or a
 * directory for a link to another one) between the check and the use. A path is checked with realpath first (by
 * the callers); then what is really used is a descriptor, whose actual location is verified after opening:
 * - a file is opened and the descriptor's real path (Linux: /proc/self/fd/N) must still be inside the root;
 * - a directory is opened the same way, and what is done inside it (list, create, delete, rename) goes through
 *   /proc/self/fd/N/<name>, which the kernel resolves from the opened directory, not from the path again; the last
 *   component is never followed (O_NOFOLLOW, O_EXCL, lstat-based removal).
 * Where /proc is missing (not Linux), the descriptor's identity (device and inode) is compared with the realpath's.
 */

const PROC_FD = "/proc/self/fd";
const hasProcFd = existsSync(PROC_FD);

/** The error of a path that was swapped to point outside its root while being opened. */
export class PathEscapeError extends Error {
  readonly code = "EESCAPE";
  constructor(readonly file: string) {
    super(`${file} resolves outside the allowed directory`);
  }
}

async function descriptorPath(fh: FileHandle, opened: string): Promise<string | undefined> {
  if (hasProcFd) {
    const real = await readlink(`${PROC_FD}/${fh.fd}`);
    return real.endsWith(" (deleted)") ? undefined : real;
  }
  const real = await realpath(opened);
  const [a, b] = await Promise.all([stat(real), fh.stat()]);
  return a.dev === b.dev && a.ino === b.ino ? real : undefined;
}

async function verify(fh: FileHandle, opened: string, roots: readonly string[]): Promise<FileHandle> {
  try {
    const real = await descriptorPath(fh, opened);
    if (real === undefined || !roots.some((r) => isInside(r, real))) throw new PathEscapeError(opened);
    return fh;
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/**
 * Opens `file` (flags as for fs.open; the last component is never followed when it is a symbolic link) and
 * verifies that the opened descriptor lies inside one of `roots` (realpaths). The caller closes the handle.
 */
export async function openInside(
  roots: readonly string[],
  file: string,
  flags: number = constants.O_RDONLY,
  mode?: number,
): Promise<FileHandle> {
  // O_NONBLOCK: opening a FIFO must not hang the request (regular files ignore the flag).
  const fh = await open(file, flags | constants.O_NOFOLLOW | constants.O_NONBLOCK, mode);
  return verify(fh, file, roots);
}

/**
 * Runs `fn` with a path naming the opened, verified file itself (Linux: /proc/self/fd/N, so code that takes a path
 * reads exactly this descriptor's file, whatever happens to `file` meanwhile), closing it afterwards.
 */
export async function withFileInside<T>(
  roots: readonly string[],
  file: string,
  fn: (p: string, fh: FileHandle) => Promise<T>,
): Promise<T> {
  const fh = await openInside(roots, file);
  try {
    return await fn(hasProcFd ? `${PROC_FD}/${fh.fd}` : file, fh);
  } finally {
    await fh.close();
  }
}

/** An opened, verified directory: `at(name)` names an entry of it through the descriptor. */
export interface ConfinedDir {
  /** A path that resolves to the opened directory itself (not through its name again). */
  readonly path: string;
  at(name: string): string;
  close(): Promise<void>;
}

/** Opens directory `dir`, verifies it lies inside one of `roots`, and hands out paths relative to the descriptor. */
export async function openDirInside(roots: readonly string[], dir: string): Promise<ConfinedDir> {
  const fh = await verify(await open(dir, constants.O_RDONLY | constants.O_DIRECTORY), dir, roots);
  // Without /proc, the verified path itself is the best available (the identity check above still ran).
  const base = hasProcFd ? `${PROC_FD}/${fh.fd}` : dir;
  return {
    path: base,
    at: (name) => `${base}/${name}`,
    close: () => fh.close(),
  };
}

/** Runs `fn` with the verified directory, closing it afterwards. */
export async function withDirInside<T>(
  roots: readonly string[],
  dir: string,
  fn: (d: ConfinedDir) => Promise<T>,
): Promise<T> {
  const d = await openDirInside(roots, dir);
  try {
    return await fn(d);
  } finally {
    await d.close();
  }
}

/**
 * `mkdir -p` inside `roots`: each missing component is created through its opened and verified parent, so a
 * component swapped for a link meanwhile makes it fail instead of creating directories elsewhere. Returns the first
 * directory created (like fs.mkdir with `recursive`), or undefined when `dir` existed.
 */
export async function mkdirInside(roots: readonly string[], dir: string): Promise<string | undefined> {
  // A root that does not exist yet (a plans directory before its first plan) is created by its own path: it is
  // configuration, not client input. Below it, every component goes through a verified parent.
  const root = roots.filter((r) => isInside(r, dir)).sort((a, b) => b.length - a.length)[0];
  let createdRoot: string | undefined;
  if (root !== undefined) createdRoot = await mkdir(root, { recursive: true });
  const missing: string[] = [];
  let existing = dir;
  for (;;) {
    const st = await stat(existing).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      throw err;
    });
    if (st) break;
    const parent = path.dirname(existing);
    if (parent === existing) break;
    missing.unshift(path.basename(existing));
    existing = parent;
  }
  let parent = existing;
  for (const name of missing) {
    await withDirInside(roots, parent, (d) => mkdir(d.at(name)));
    parent = path.join(parent, name);
  }
  return createdRoot ?? (missing.length > 0 ? path.join(existing, missing[0] as string) : undefined);
}

/**
 * Writes `data` to `file` inside `roots`: the parent directory is opened and verified, the file is created or
 * truncated through it, never through a symbolic link. `exclusive` refuses an existing file (EEXIST).
 */
export async function writeFileInside(
  roots: readonly string[],
  file: string,
  data: string | Uint8Array,
  opts: { exclusive?: boolean; mode?: number } = {},
): Promise<void> {
  await withDirInside(roots, path.dirname(file), async (d) => {
    const flags =
      constants.O_WRONLY |
      constants.O_CREAT |
      constants.O_NOFOLLOW |
      (opts.exclusive ? constants.O_EXCL : constants.O_TRUNC);
    const fh = await open(d.at(path.basename(file)), flags, opts.mode ?? 0o666);
    try {
      await fh.writeFile(data);
    } finally {
      await fh.close();
    }
  });
}

/** Reads a whole file inside `roots` through a verified descriptor. */
export async function readFileInside(roots: readonly string[], file: string, signal?: AbortSignal): Promise<Buffer> {
  const fh = await openInside(roots, file);
  try {
    return await fh.readFile({ signal });
  } finally {
    await fh.close();
  }
}
