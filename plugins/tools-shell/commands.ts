import { basename } from "./argv.js";
import { type Script, type SimpleCommand, walkScript } from "./ast.js";
import { parseShell } from "./parser.js";
import { SHELLS, shellInvocation } from "./programs.js";
import { unwrap } from "./wrappers.js";

/**
 * One command a line would run, as approval rules see it. Every simple command counts: those joined by `&&`, `||`,
 * `;` and pipes, in subshells and substitutions, and those run through `sh -c`, `eval`, `xargs`, `env`, `nohup`,
 * `time` and the like (such wrappers are transparent). Privilege wrappers (`sudo`, `doas`, `su`) are not: a rule
 * must name them to allow them.
 */
export interface CommandPart {
  /** What an allow rule must match: leading assignments, privilege wrappers, the program and its arguments. */
  strict: string[];
  /** Also matched by deny and ask rules: the program and its arguments alone (so `FOO=1 sudo rm` meets `rm *`). */
  bare: string[];
  /** The simple command's own source text (for judging it alone). */
  text: string;
  /** The program's name is only known at run time (`$cmd`): no rule can allow it. */
  dynamic: boolean;
}

const MAX_DEPTH = 8;

/** The commands of a line; throws ShellSyntaxError when it cannot be parsed (then nothing may be allowed by rule). */
export function commandParts(line: string): CommandPart[] {
  const out: CommandPart[] = [];
  collect(parseShell(line), out, 0);
  return out;
}

function collect(script: Script, out: CommandPart[], depth: number): void {
  if (depth > MAX_DEPTH) throw new Error("commands nested too deeply");
  walkScript(script, {
    command: (c) => {
      if (c.type === "simple" && c.words.length) simple(c, out, depth);
    },
  });
}

function simple(c: SimpleCommand, out: CommandPart[], depth: number): void {
  const argv = c.words.map((w) => w.value);
  const u = unwrap(argv);
  for (const s of u.scripts) collect(parseShell(s), out, depth + 1);
  const text = [...c.assigns, ...c.words].map((w) => w.raw).join(" ");
  const assigns = c.assigns.map((w) => w.value);
  if (u.start < 0) {
    if (!u.scripts.length) out.push({ strict: [...assigns, ...argv], bare: argv, text, dynamic: c.words[0].dynamic });
    return;
  }
  const elevated = u.reasons.length > 0;
  const args = argv.slice(u.start);
  const name = basename(args[0]);
  if (!elevated && SHELLS.has(name)) {
    const inv = shellInvocation(args);
    if (inv.script !== undefined) {
      collect(parseShell(inv.script), out, depth + 1);
      return;
    }
  }
  if (!elevated && name === "eval") {
    collect(parseShell(args.slice(1).join(" ")), out, depth + 1);
    return;
  }
  out.push({
    strict: [...assigns, ...(elevated ? argv : args)],
    bare: args,
    text,
    dynamic: c.words[u.start].dynamic,
  });
}
