/** The syntax tree of the POSIX/bash subset `parser.ts` understands, and a walker over it. */

/** One shell word after quote removal; expansions are kept as their source text because their values are unknown. */
export interface Word {
  /** The source text, quotes included. */
  raw: string;
  /** The text after quote removal; `$x`, `$(...)` and backticks stay as written. */
  value: string;
  /** Some part of the word was quoted or escaped. */
  quoted: boolean;
  /** The word contains a parameter, arithmetic or command expansion outside single quotes. */
  dynamic: boolean;
  /** The word contains an unquoted glob character (`*`, `?`, `[`). */
  glob: boolean;
  /** Command and process substitutions inside the word, parsed. */
  subs: Script[];
  /** The word contains a process substitution (`<(...)`, `>(...)`). */
  procSubst: boolean;
}

export type RedirectOp = "<" | ">" | ">>" | ">|" | "<>" | "<&" | ">&" | "&>" | "&>>" | "<<" | "<<-" | "<<<";

export interface Redirect {
  /** The explicit file descriptor (`2>`), if any. */
  fd: number | undefined;
  op: RedirectOp;
  /** The file, descriptor or here-document delimiter. */
  target: Word;
  /** For `<<`/`<<-`: the body; `dynamic`/`subs` are only set when the delimiter was unquoted. */
  heredoc?: Word;
}

export interface SimpleCommand {
  type: "simple";
  /** Leading `NAME=value` words. */
  assigns: Word[];
  /** The command name and its arguments. */
  words: Word[];
  redirects: Redirect[];
}

/** `test` is `[[ ]]`; `arith` is `(( ))` and the header of `for (( ))`. */
export type CompoundKind =
  | "subshell"
  | "group"
  | "if"
  | "while"
  | "until"
  | "for"
  | "select"
  | "case"
  | "test"
  | "arith";

export interface CompoundCommand {
  type: "compound";
  kind: CompoundKind;
  /** Every command list inside (conditions, bodies, case arms). */
  bodies: Script[];
  /** Words that are not commands: `for` items, the `case` subject and patterns, `[[ ]]` operands. */
  words: Word[];
  redirects: Redirect[];
}

export interface FunctionDef {
  type: "function";
  name: string;
  body: Command;
  redirects: Redirect[];
}

export type Command = SimpleCommand | CompoundCommand | FunctionDef;

export interface Pipeline {
  negated: boolean;
  commands: Command[];
}

export interface AndOrList {
  pipelines: Pipeline[];
  /** `ops[i]` joins `pipelines[i]` and `pipelines[i + 1]`. */
  ops: Array<"&&" | "||">;
}

export interface ListItem {
  list: AndOrList;
  /** Ended with `&`. */
  background: boolean;
}

export interface Script {
  items: ListItem[];
}

export interface Visitor {
  /** Every pipeline, including those inside substitutions, compound commands and function bodies. */
  pipeline?(p: Pipeline, background: boolean): void;
  /** Every command of every pipeline. */
  command?(c: Command): void;
  /** Every word (arguments, assignments, redirect targets, here-document bodies, `for`/`case` words). */
  word?(w: Word): void;
}

/** Visits the whole tree, descending into substitutions so nothing that will run is missed. */
export function walkScript(script: Script, v: Visitor): void {
  for (const item of script.items) {
    for (const p of item.list.pipelines) {
      v.pipeline?.(p, item.background);
      for (const c of p.commands) walkCommand(c, v);
    }
  }
}

function walkCommand(c: Command, v: Visitor): void {
  v.command?.(c);
  switch (c.type) {
    case "simple":
      for (const w of c.assigns) walkWord(w, v);
      for (const w of c.words) walkWord(w, v);
      break;
    case "compound":
      for (const w of c.words) walkWord(w, v);
      for (const b of c.bodies) walkScript(b, v);
      break;
    case "function":
      walkCommand(c.body, v);
      break;
  }
  for (const r of c.redirects) {
    walkWord(r.target, v);
    if (r.heredoc) walkWord(r.heredoc, v);
  }
}

function walkWord(w: Word, v: Visitor): void {
  v.word?.(w);
  for (const s of w.subs) walkScript(s, v);
}

/** True when the word is exactly `text` with no quoting (how reserved words are recognised). */
export function isBare(w: Word, text: string): boolean {
  return w.raw === text;
}
