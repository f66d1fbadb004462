import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import ignore from "ignore";
import { withDirInside } from "../../core/index.js";
import { type EntryType, joinRel, typeOf } from "./entries.js";

export interface SearchHit {
  path: string;
  type: EntryType;
}

export interface SearchLimits {
  /** Results returned at most. */
  maxResults: number;
  /** Directory entries looked at, at most (the walk stops there and reports `truncated`). */
  maxVisited: number;
}

/** A set of .gitignore rules and how to express a root-relative path in the rules' own directory. */
interface Rules {
  test(rel: string, isDir: boolean): { ignored: boolean; unignored: boolean };
}

function rulesAt(text: string, toLocal: (rel: string) => string | undefined): Rules {
  const ig = ignore().add(text);
  return {
    test(rel, isDir) {
      const local = toLocal(rel);
      if (local === undefined || local === "") return { ignored: false, unignored: false };
      return ig.test(isDir ? `${local}/` : local);
    },
  };
}

function isIgnored(stack: Rules[], rel: string, isDir: boolean): boolean {
  // The deepest .gitignore with an opinion wins, as in git (a nested "!keep.log" re-includes).
  for (let i = stack.length - 1; i >= 0; i--) {
    const r = stack[i]?.test(rel, isDir);
    if (r?.ignored) return true;
    if (r?.unignored) return false;
  }
  return false;
}

/**
 * When the root sits inside a git work tree, the .gitignore files of its ancestors up to the repository top apply
 * too (as git applies them). Outside a repository only the root's own files count.
 */
async function ancestorRules(root: string): Promise<Rules[]> {
  const chain: string[] = [];
  let dir = root;
  for (;;) {
    const parent = path.dirname(dir);
    if (existsSync(path.join(dir, ".git"))) break;
    if (parent === dir) return [];
    chain.push(parent);
    dir = parent;
  }
  const rules: Rules[] = [];
  for (const anc of chain.reverse()) {
    const text = await readFile(path.join(anc, ".gitignore"), "utf8").catch(() => undefined);
    if (text === undefined) continue;
    const prefix = path.relative(anc, root).split(path.sep).join("/");
    rules.push(rulesAt(text, (rel) => `${prefix}/${rel}`));
  }
  return rules;
}

/**
 * Case-insensitive substring search over entry names (over the whole relative path when the query contains "/"),
 * breadth-first so shallow matches come first. `.git` is never entered; .gitignore'd entries are skipped; symbolic
 * links are reported, never followed.
 */
export async function searchFiles(
  root: string,
  query: string,
  limits: SearchLimits,
  signal: AbortSignal,
): Promise<{ results: SearchHit[]; truncated: boolean }> {
  const needle = query.toLowerCase();
  const onPath = needle.includes("/");
  const results: SearchHit[] = [];
  let visited = 0;
  const queue: Array<{ rel: string; stack: Rules[] }> = [{ rel: "", stack: await ancestorRules(root) }];
  for (let next = 0; next < queue.length; next++) {
    signal.throwIfAborted();
    const { rel: dirRel, stack: inherited } = queue[next] as { rel: string; stack: Rules[] };
    const dirAbs = dirRel === "" ? root : path.join(root, dirRel);
    // Listed through the opened directory, verified inside the root: a directory swapped for a link is skipped.
    const entries = await withDirInside([root], dirAbs, (d) => readdir(d.path, { withFileTypes: true })).catch(
      () => [],
    );
    let stack = inherited;
    if (entries.some((e) => e.name === ".gitignore" && e.isFile())) {
      const text = await readFile(path.join(dirAbs, ".gitignore"), "utf8").catch(() => "");
      const base = dirRel;
      stack = [...inherited, rulesAt(text, (rel) => (base === "" ? rel : rel.slice(base.length + 1)))];
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (++visited > limits.maxVisited) return { results, truncated: true };
      if (e.name === ".git") continue;
      const rel = joinRel(dirRel, e.name);
      const isDir = e.isDirectory();
      if (isIgnored(stack, rel, isDir)) continue;
      const hay = (onPath ? rel : e.name).toLowerCase();
      if (hay.includes(needle)) {
        if (results.length >= limits.maxResults) return { results, truncated: true };
        results.push({ path: rel, type: (await typeOf(e, path.join(dirAbs, e.name), [root], false)).type });
      }
      if (isDir) queue.push({ rel, stack });
    }
  }
  return { results, truncated: false };
}
