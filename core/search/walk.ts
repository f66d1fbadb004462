import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { withDirInside } from "../confined-fs.js";
import { isIgnored, RULE_FILES, type RuleSet, rootRules, ruleSet } from "./ignore-rules.js";
import { compareNames } from "./order.js";

/**
 * The JavaScript engine's listing: regular files below `root` ("/"-separated, relative), depth first in
 * compareNames order, hidden files included, `.git` and ignored paths skipped (ignore-rules.ts), symbolic links and
 * special files never listed nor followed. Each directory is read through its opened, verified descriptor, so a
 * directory swapped for a link meanwhile is skipped.
 */
export async function* walkFiles(root: string, signal: AbortSignal): AsyncGenerator<string[]> {
  yield* visit(root, "", await rootRules(root), signal);
}

async function* visit(
  root: string,
  dirRel: string,
  inherited: RuleSet[],
  signal: AbortSignal,
): AsyncGenerator<string[]> {
  signal.throwIfAborted();
  const dirAbs = dirRel === "" ? root : path.join(root, dirRel);
  const entries = await withDirInside([root], dirAbs, async (d) => {
    const list = await readdir(d.path, { withFileTypes: true });
    const rules: RuleSet[] = [];
    for (const [name, kind] of RULE_FILES) {
      if (!list.some((e) => e.name === name && e.isFile())) continue;
      const text = await readFile(d.at(name), "utf8").catch(() => undefined);
      if (text !== undefined) rules.push(ruleSet(kind, text, ""));
    }
    return { list, rules };
  }).catch(() => undefined);
  if (!entries) return;
  // A rule file of this directory sees paths relative to it: `prefix` is set per file below.
  const stack = entries.rules.length === 0 ? inherited : [...inherited, ...entries.rules.map((r) => rebase(r, dirRel))];
  const list = entries.list.sort((a, b) => compareNames(a.name, b.name));
  // The files of a directory go out in batches, between its subdirectories (depth first).
  let batch: string[] = [];
  for (const e of list) {
    if (e.name === ".git") continue;
    const rel = dirRel === "" ? e.name : `${dirRel}/${e.name}`;
    const isDir = e.isDirectory();
    if (!isDir && !e.isFile()) continue;
    if (isIgnored(stack, rel, isDir)) continue;
    if (!isDir) {
      batch.push(rel);
      continue;
    }
    if (batch.length > 0) yield batch;
    batch = [];
    yield* visit(root, rel, stack, signal);
  }
  if (batch.length > 0) yield batch;
}

/** A directory's own rule set, tested with root-relative paths: strips the directory part again. */
function rebase(rules: RuleSet, dirRel: string): RuleSet {
  if (dirRel === "") return rules;
  const cut = dirRel.length + 1;
  return { kind: rules.kind, prefix: "", test: (p) => rules.test(p.slice(cut)) };
}
