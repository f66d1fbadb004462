/*
 * Checks on listed paths, done with synchronous calls in short slices (a few hundred system calls, then the event
 * loop runs again): on a busy thread pool one lstat through it costs several times the call itself, and a listing
 * has thousands.
 */
import {
  closeSync,
  constants,
  existsSync,
  lstatSync,
  opendirSync,
  openSync,
  readdirSync,
  readlinkSync,
  type Stats,
} from "node:fs";
import path from "node:path";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { isInside } from "../paths.js";

const CALLS_PER_SLICE = 256;
const PROC_FD = "/proc/self/fd";
const hasProcFd = existsSync(PROC_FD);

/**
 * The modification time (ms) of each path below `base` that is a regular file, by lstat (a link is never followed), in
 * the order given: null for anything else, undefined when it is gone or unreadable. Numbers, not the `Stats`: a
 * listing's thousands of `Stats` (each with four `Date`s) would live, and be copied by each young-generation
 * collection, until the caller is done with all of them.
 */
export async function fileTimes(base: string, rels: readonly string[]): Promise<Array<number | null | undefined>> {
  const out: Array<number | null | undefined> = [];
  for (let i = 0; i < rels.length; i++) {
    if (i > 0 && i % CALLS_PER_SLICE === 0) await yieldToLoop();
    // A listed path is already relative and normal: joined by hand (path.join normalises it again, per file).
    const st = lstatSync(`${base}/${rels[i] as string}`, { throwIfNoEntry: false });
    out.push(st === undefined ? undefined : st.isFile() ? st.mtimeMs : null);
  }
  return out;
}

/** The real path of an opened descriptor (Linux); without /proc, the realpath of the path it was opened by. */
function openedDir(dir: string): { fd: number; at(name: string | Buffer): string | Buffer; real: string } {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    if (!hasProcFd) return { fd, at: (n) => (typeof n === "string" ? path.join(dir, n) : n), real: dir };
    const base = `${PROC_FD}/${fd}`;
    const at = (n: string | Buffer) =>
      typeof n === "string" ? `${base}/${n}` : Buffer.concat([Buffer.from(`${base}/`), n]);
    return { fd, at, real: readlinkSync(base) };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** A confirmed entry's kind: an lstat's `Stats`, or the directory entry read with its directory. */
export type EntryKind = Pick<Stats, "isFile" | "isDirectory">;

/**
 * A directory holding several of the names wanted from it is read (`getdents`: many entries per system call) instead
 * of an lstat per name, until every name is found or ENTRIES_PER_NAME other entries per name are read; a name not
 * reached by then is lstat'ed. So a directory of many entries holding few of the names costs at most a little reading
 * more than their lstats, whatever its file system reports as its size.
 */
const ENTRIES_PER_NAME = 32;
/** Fewer names than this are lstat'ed: reading a directory takes an open, a `getdents` or two and a close. */
const MIN_NAMES_TO_READ = 4;

/** `names` looked up by reading the directory at `dir`: the kinds of those found, and those it did not reach. */
function readNames(dir: string, names: readonly string[]): { kinds: Map<string, EntryKind>; unread: string[] } {
  const wanted = new Set(names);
  const kinds = new Map<string, EntryKind>();
  let budget = names.length * ENTRIES_PER_NAME;
  const d = opendirSync(dir, { bufferSize: 256 });
  try {
    // Decoded as ripgrep's and the walk's names are (UTF-8, U+FFFD for bytes that are not): the same strings.
    for (let e = d.readSync(); e !== null && kinds.size < wanted.size; e = d.readSync()) {
      if (wanted.has(e.name)) kinds.set(e.name, e);
      else if (--budget === 0) break;
    }
  } finally {
    d.closeSync();
  }
  // Out of budget, a name not yet found is lstat'ed; at the directory's end (the budget left), it is gone.
  return { kinds, unread: budget === 0 ? names.filter((n) => !kinds.has(n)) : [] };
}

/**
 * Confirms listed paths before anything about them is shown: each parent directory is opened and its descriptor's
 * real path must lie inside `root` (a realpath); the entry is then found through that descriptor (by reading the
 * directory when several names are wanted from it, see ENTRIES_PER_NAME, else an lstat). A path whose directory
 * was swapped for a link to somewhere else while ripgrep (which reads by path) listed it, or that is gone, is
 * dropped. A name that is not UTF-8 (it reaches JavaScript with U+FFFD in it) is found again by its bytes. Returns
 * the kind of every confirmed path, in the order given; with `stats`, its lstat.
 */
export async function confirmInside(
  root: string,
  rels: readonly string[],
  opts: { stats: true },
): Promise<Array<[string, Stats]>>;
export async function confirmInside(root: string, rels: readonly string[]): Promise<Array<[string, EntryKind]>>;
export async function confirmInside(
  root: string,
  rels: readonly string[],
  opts: { stats?: boolean } = {},
): Promise<Array<[string, EntryKind]>> {
  const byDir = new Map<string, string[]>();
  for (const rel of rels) {
    const cut = rel.lastIndexOf("/");
    const dir = cut === -1 ? "" : rel.slice(0, cut);
    const names = byDir.get(dir) ?? [];
    if (names.length === 0) byDir.set(dir, names);
    names.push(rel.slice(cut + 1));
  }
  const found = new Map<string, EntryKind>();
  let calls = 0;
  for (const [dir, names] of byDir) {
    calls += names.length + 3;
    if (calls > CALLS_PER_SLICE) {
      calls = 0;
      await yieldToLoop();
    }
    let d: ReturnType<typeof openedDir>;
    try {
      d = openedDir(dir === "" ? root : path.join(root, dir));
    } catch {
      continue;
    }
    try {
      if (!isInside(root, d.real)) continue;
      const key = (name: string) => (dir === "" ? name : `${dir}/${name}`);
      let todo: readonly string[] = names;
      if (!opts.stats && names.length >= MIN_NAMES_TO_READ) {
        const { kinds, unread } = readNames(d.at(".") as string, names);
        for (const [name, e] of kinds) found.set(key(name), e);
        todo = unread;
      }
      const raw = todo.some((n) => n.includes("\uFFFD"))
        ? new Map(readdirSync(d.at(".") as string, { encoding: "buffer" }).map((b) => [b.toString("utf8"), b]))
        : undefined;
      for (const name of todo) {
        const st = lstatSync(d.at(raw?.get(name) ?? name), { throwIfNoEntry: false });
        if (st) found.set(key(name), st);
      }
    } catch {
      // unreadable: nothing of it is confirmed
    } finally {
      closeSync(d.fd);
    }
  }
  const out: Array<[string, EntryKind]> = [];
  for (const rel of rels) {
    const st = found.get(rel);
    if (st) out.push([rel, st]);
  }
  return out;
}
