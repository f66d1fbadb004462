import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { isInside } from "./paths.js";

/** A plugin folder in `<project>/.agentd/plugins/<name>/` and the content hash trust is pinned to. */
export interface ProjectPluginInfo {
  name: string;
  dir: string;
  /**
   * sha256 over every file's relative path and bytes (symlinks by their target text); "" when unreadable, too large,
   * or holding a symlink that points outside the folder (such a plugin never loads).
   */
  hash: string;
}

const MAX_FILES = 5000;
const MAX_BYTES = 64 * 1024 * 1024;
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The hash of a plugin folder: changes whenever a file is added, removed, renamed or edited. */
export function hashPluginDir(dir: string): string {
  const h = createHash("sha256");
  let files = 0;
  let bytes = 0;
  const realDir = realpathSync(dir);
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const rel = relative(dir, p).split(sep).join("/");
      const st = lstatSync(p);
      if (st.isDirectory()) {
        walk(p);
        continue;
      }
      if (++files > MAX_FILES) throw new Error(`more than ${MAX_FILES} files`);
      bytes += st.size;
      if (bytes > MAX_BYTES) throw new Error(`larger than ${MAX_BYTES} bytes`);
      h.update(`${st.isSymbolicLink() ? "L" : "F"}\0${rel}\0${st.size}\0`);
      // A symlink counts by where it points; it must stay inside the folder (whose files are hashed themselves):
      // code outside could change without changing the hash.
      if (st.isFile()) h.update(readFileSync(p));
      else if (st.isSymbolicLink()) {
        if (!isInside(realDir, realpathSync(p))) throw new Error(`${rel} points outside the plugin folder`);
        h.update(readlinkSync(p));
      }
    }
  };
  walk(dir);
  return h.digest("hex");
}

/** A cheap fingerprint of a folder (names, sizes, mtimes, inodes: lstat only), for display caching. */
function fingerprint(dir: string): string {
  const parts: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      parts.push(`${name}:${st.size}:${st.mtimeMs}:${st.ino}:${st.mode}`);
      if (st.isDirectory()) walk(p);
      if (parts.length > MAX_FILES * 2) throw new Error("too many files");
    }
  };
  walk(dir);
  return parts.join("/");
}

const shown = new Map<string, { fp: string; hash: string }>();

/**
 * `hashPluginDir` for display (trust prompts, status; read on every session summary): re-hashed only when the
 * folder's fingerprint changed. Whether a plugin loads is always decided on a fresh hash, never on this cache.
 */
function displayHash(dir: string): string {
  let fp: string;
  try {
    fp = fingerprint(dir);
  } catch {
    return "";
  }
  const hit = shown.get(dir);
  if (hit && hit.fp === fp) return hit.hash;
  let hash = "";
  try {
    hash = hashPluginDir(dir);
  } catch {
    // unreadable, too large, or a symlink out of the folder
  }
  if (shown.size >= 500) shown.clear();
  shown.set(dir, { fp, hash });
  return hash;
}

/**
 * The plugin folders of a project root (those holding a package.json), sorted by name. Never throws. `forDisplay`
 * reuses hashes of unchanged folders (see `displayHash`); the loader always hashes afresh.
 */
export function scanProjectPlugins(root: string, opts: { forDisplay?: boolean } = {}): ProjectPluginInfo[] {
  const base = join(root, ".agentd", "plugins");
  // Asked for every session summary: most projects have no plugins folder, and a failing readdir costs a stack trace.
  if (!statSync(base, { throwIfNoEntry: false })?.isDirectory()) return [];
  let names: string[];
  try {
    names = readdirSync(base).sort();
  } catch {
    return [];
  }
  const out: ProjectPluginInfo[] = [];
  for (const name of names) {
    if (!NAME_RE.test(name)) continue;
    const dir = join(base, name);
    try {
      if (!lstatSync(dir).isDirectory() || !lstatSync(join(dir, "package.json")).isFile()) continue;
    } catch {
      continue;
    }
    let hash = "";
    if (opts.forDisplay) hash = displayHash(dir);
    else {
      try {
        hash = hashPluginDir(dir);
      } catch {
        // unreadable or too large: never matches a pin, so never loads
      }
    }
    out.push({ name, dir, hash });
  }
  return out;
}

/** How a plugin stands against the hashes trust was pinned to. */
export type ProjectPluginState = "trusted" | "new" | "changed";

export function pluginState(p: ProjectPluginInfo, pins: Record<string, string> | undefined): ProjectPluginState {
  const pinned = pins?.[p.name];
  if (pinned === undefined) return "new";
  return pinned === p.hash && p.hash !== "" ? "trusted" : "changed";
}
