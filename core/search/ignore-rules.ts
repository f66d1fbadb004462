/*
 * The ignore rules of the JavaScript file walk, written to agree with ripgrep (`rg --hidden --no-require-git`):
 * - four kinds of rule files, in this precedence: .rgignore, .ignore, .gitignore, the repository's
 *   .git/info/exclude; then the global git excludes (core.excludesFile of ~/.gitconfig or
 *   $XDG_CONFIG_HOME/git/config, else $XDG_CONFIG_HOME/git/ignore). Within one kind the deepest file with an opinion
 *   about a path decides (a nested "!keep.log" re-includes);
 * - the walk root's ancestors count too: .ignore and .rgignore of every ancestor, .gitignore up to the top of the
 *   repository the root lies in (of every ancestor when it lies in none);
 * - a path is matched alone, never through its parents: the walk does not enter an ignored directory, and a root
 *   the model asked for explicitly is searched even when its parent's rules ignore it (as ripgrep does).
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import ignore, { type Ignore } from "ignore";

export type RuleKind = "rgignore" | "ignore" | "gitignore" | "exclude" | "global";
const KINDS: readonly RuleKind[] = ["rgignore", "ignore", "gitignore", "exclude", "global"];
export const RULE_FILES: ReadonlyArray<readonly [string, RuleKind]> = [
  [".rgignore", "rgignore"],
  [".ignore", "ignore"],
  [".gitignore", "gitignore"],
];

type Verdict = { ignored: boolean; unignored: boolean };
/** The `ignore` package's own single-path test (no parent check); see the note at the top. */
type RuleTester = { _rules?: { test?: (p: string, mode: string) => Verdict } };

/** One rule file: its kind and the path from its directory to the walk root ("" when it is the root's). */
export interface RuleSet {
  kind: RuleKind;
  prefix: string;
  test(local: string): Verdict;
}

export function ruleSet(kind: RuleKind, text: string, prefix: string): RuleSet {
  // Case-sensitive, as git and ripgrep are on Linux.
  const ig: Ignore = ignore({ ignoreCase: false, allowRelativePaths: true }).add(text);
  const own = (ig as unknown as RuleTester)._rules;
  const single = typeof own?.test === "function" ? own.test.bind(own) : undefined;
  return {
    kind,
    prefix,
    test: (local) => (single ? single(local, "regex") : ig.test(local)),
  };
}

/** True when `rel` (relative to the walk root, "/"-separated) is ignored under `stack` (outermost first). */
export function isIgnored(stack: readonly RuleSet[], rel: string, isDir: boolean): boolean {
  for (const kind of KINDS) {
    for (let i = stack.length - 1; i >= 0; i--) {
      const rules = stack[i];
      if (rules?.kind !== kind) continue;
      const local = rules.prefix === "" ? rel : `${rules.prefix}/${rel}`;
      const r = rules.test(isDir ? `${local}/` : local);
      if (r.ignored) return true;
      if (r.unignored) return false;
    }
  }
  return false;
}

async function readText(file: string): Promise<string | undefined> {
  return readFile(file, "utf8").catch(() => undefined);
}

function configHome(): string {
  return process.env.XDG_CONFIG_HOME || path.join(homedir(), ".config");
}

/** core.excludesFile from the user's git configuration (a minimal reader: [core] excludesFile = path). */
async function globalExcludesFile(): Promise<string> {
  let found: string | undefined;
  for (const file of [path.join(configHome(), "git", "config"), path.join(homedir(), ".gitconfig")]) {
    const text = await readText(file);
    if (text === undefined) continue;
    let inCore = false;
    for (const raw of text.split(/\r?\n/)) {
      const line = raw.trim();
      const section = /^\[\s*([^\]\s"]+)/.exec(line);
      if (section) inCore = section[1]?.toLowerCase() === "core";
      const kv = /^excludesfile\s*=\s*(.*)$/i.exec(line);
      if (inCore && kv?.[1] !== undefined) found = kv[1].replace(/^"(.*)"$/, "$1").trim();
    }
  }
  if (found) return found.startsWith("~/") ? path.join(homedir(), found.slice(2)) : found;
  return path.join(configHome(), "git", "ignore");
}

/** The nearest directory at or above `dir` holding `.git` (a directory, or a file for worktrees). */
export function repositoryTop(dir: string): string | undefined {
  for (let d = dir; ; d = path.dirname(d)) {
    if (existsSync(path.join(d, ".git"))) return d;
    if (path.dirname(d) === d) return undefined;
  }
}

/** The rules that apply at the walk root before its own rule files: ancestors, exclude, global. */
export async function rootRules(root: string): Promise<RuleSet[]> {
  const top = repositoryTop(root);
  const stack: RuleSet[] = [];
  const global = await readText(await globalExcludesFile());
  if (global !== undefined) stack.push(ruleSet("global", global, ""));
  if (top !== undefined) {
    const exclude = await readText(path.join(top, ".git", "info", "exclude"));
    if (exclude !== undefined) stack.push(ruleSet("exclude", exclude, relative(top, root)));
  }
  const ancestors: string[] = [];
  for (let d = path.dirname(root); ; d = path.dirname(d)) {
    ancestors.unshift(d);
    if (path.dirname(d) === d) break;
  }
  for (const dir of ancestors) {
    const inRepo = top === undefined || dir === top || dir.startsWith(`${top}/`);
    for (const [name, kind] of RULE_FILES) {
      if (kind === "gitignore" && !inRepo) continue;
      const text = await readText(path.join(dir, name));
      if (text !== undefined) stack.push(ruleSet(kind, text, relative(dir, root)));
    }
  }
  return stack;
}

function relative(from: string, to: string): string {
  return path.relative(from, to).split(path.sep).join("/");
}
