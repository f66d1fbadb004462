import type { CommandClassification } from "../../core/index.js";
import { basename, display } from "./argv.js";
import { type FunctionDef, type Pipeline, type Redirect, type Script, type Word, walkScript } from "./ast.js";
import { parseShell, ShellSyntaxError } from "./parser.js";
import {
  BLOCK_DEVICE,
  DELETERS,
  DOWNLOADERS,
  interpreterName,
  producedCode,
  programSource,
  readsProgramFromStdin,
  SHELLS,
} from "./programs.js";
import { ruleFor } from "./rules.js";
import { unwrap } from "./wrappers.js";

/**
 * Which commands need the user's confirmation. The command line is parsed (never substring-matched), every
 * command that would run is looked at (inside `&&`/`||`/`;`, pipes, subshells, `$( )`, backticks, `<( )`,
 * `bash -c`, `eval`, and behind `sudo`/`env`/`nohup`/`xargs`/`time`/...), and each is judged by what the
 * command itself would do with its arguments. Deliberately not flagged: a plain `rm file` (no -r/-f, not `/`,
 * `~` or `*`), commands whose name is only known at run time (`$cmd`), and anything that merely mentions a
 * dangerous command as data (`echo "rm -rf /"`, `grep -r sudo`).
 */

export type { CommandClassification };

/** How many `bash -c`/`eval` layers are followed before giving up (and asking). */
const MAX_DEPTH = 8;

export function classifyCommand(command: string): CommandClassification {
  const reasons = new Set<string>();
  try {
    classifyString(command, reasons, 0);
  } catch (err) {
    reasons.add(
      err instanceof ShellSyntaxError
        ? `the command could not be parsed (${err.detail}), so it could not be checked`
        : "the command could not be checked",
    );
  }
  return { dangerous: reasons.size > 0, reasons: [...reasons] };
}

type Reasons = Set<string>;

function classifyString(src: string, reasons: Reasons, depth: number): void {
  if (depth > MAX_DEPTH) {
    reasons.add("commands nested too deeply (bash -c, eval) to be checked");
    return;
  }
  classifyScript(parseShell(src), reasons, depth);
}

function classifyScript(script: Script, reasons: Reasons, depth: number): void {
  /** Files written by a downloader earlier in the script (`curl -o x.sh ... && sh x.sh`). */
  const downloaded = new Set<string>();
  walkScript(script, {
    pipeline: (p) => checkPipeline(p, reasons),
    command: (c) => {
      for (const r of c.redirects) checkRedirect(r, reasons);
      if (c.type === "function") checkForkBomb(c, reasons);
      if (c.type !== "simple" || !c.words.length) return;
      const argv = c.words.map((w) => w.value);
      classifyArgv(argv, reasons, depth);
      const start = unwrap(argv).start;
      if (start < 0 || start >= argv.length) return;
      const args = argv.slice(start);
      checkRemoteCode(c.words.slice(start), reasons);
      for (const file of downloadTargets(args, c.redirects)) downloaded.add(file);
      const source = programSource(args);
      if (source?.kind === "file" && downloaded.has(normalizePath(source.file))) {
        reasons.add(`runs a file downloaded just before: ${display(args)}`);
      }
    },
  });
}

function normalizePath(p: string): string {
  return p.replace(/^(\.\/)+/, "");
}

/** Where a downloader writes: its stdout redirection, `curl -o`, `wget -O`, or wget's default (the URL's name). */
function downloadTargets(args: readonly string[], redirects: readonly Redirect[]): string[] {
  const name = basename(args[0]);
  if (!DOWNLOADERS.has(name)) return [];
  const out = redirects
    .filter((r) => [">", ">>", ">|", "&>", "&>>"].includes(r.op) && (r.fd === undefined || r.fd === 1))
    .map((r) => r.target.value);
  // The output option, possibly at the end of a cluster of flags (`curl -fsSLo x`, `wget -qO x`).
  const option = name === "curl" ? /^-[fsSLkvqiIgN#]*o(.*)$/ : name === "wget" ? /^-[qncvN]*O(.*)$/ : undefined;
  let named = false;
  for (let i = 1; i < args.length; i++) {
    const a = args[i];
    const m = option?.exec(a);
    if (m || a === "--output" || a === "--output-document") {
      named = true;
      const value = m?.[1] || args[++i];
      if (value !== undefined && value !== "-") out.push(value);
    } else if (a.startsWith("--output=") || a.startsWith("--output-document=")) {
      named = true;
      out.push(a.slice(a.indexOf("=") + 1));
    }
  }
  if (name === "wget" && !named) {
    for (const a of args.slice(1)) {
      if (!/^[a-z]+:\/\//i.test(a)) continue;
      try {
        out.push(new URL(a).pathname.split("/").pop() || "index.html");
      } catch {
        // not a URL after all
      }
    }
  }
  return out.map(normalizePath);
}

function classifyArgv(argv: readonly string[], reasons: Reasons, depth: number): void {
  if (depth > MAX_DEPTH) {
    reasons.add("commands nested too deeply to be checked");
    return;
  }
  const u = unwrap(argv);
  for (const r of u.reasons) reasons.add(r);
  for (const s of u.scripts) classifyString(s, reasons, depth + 1);
  if (u.start < 0) return;
  const args = argv.slice(u.start);
  const name = basename(args[0]);
  if (u.viaXargs && DELETERS.has(name)) reasons.add(`deletes every file named on its input: xargs ${display(args)}`);
  ruleFor(name)?.(args, {
    add: (reason) => reasons.add(reason),
    argv: (inner) => classifyArgv(inner, reasons, depth + 1),
    script: (src) => classifyString(src, reasons, depth + 1),
  });
}

function effective(words: readonly string[]): string[] | undefined {
  const u = unwrap(words);
  return u.start >= 0 && u.start < words.length ? words.slice(u.start) : undefined;
}

function checkPipeline(p: Pipeline, reasons: Reasons): void {
  if (p.commands.length < 2) return;
  let source: string | undefined;
  for (const c of p.commands) {
    if (c.type !== "simple") continue;
    const args = effective(c.words.map((w) => w.value));
    if (!args) continue;
    if (source && readsProgramFromStdin(args)) {
      reasons.add(`runs ${source} as a program: ... | ${display(args, 40)}`);
    }
    source ??= producedCode(args);
  }
}

/** `bash <(curl ...)`, `sh -c "$(curl ...)"`, `eval "$(base64 -d ...)"`. */
function checkRemoteCode(words: readonly Word[], reasons: Reasons): void {
  const name = basename(words[0].value);
  const runsCode = SHELLS.has(name) || interpreterName(name) || ["eval", "source", "."].includes(name);
  if (!runsCode) return;
  for (const w of words.slice(1)) {
    for (const sub of w.subs) {
      const what = scriptProducesCode(sub);
      if (what) reasons.add(`runs ${what} as a program: ${name} ${w.raw.slice(0, 60)}`);
    }
  }
}

function scriptProducesCode(script: Script): string | undefined {
  let found: string | undefined;
  walkScript(script, {
    command: (c) => {
      if (found || c.type !== "simple" || !c.words.length) return;
      const args = effective(c.words.map((w) => w.value));
      if (args) found = producedCode(args);
    },
  });
  return found;
}

const WRITE_REDIRECTS = new Set(["<>", ">", ">>", ">|", "&>", "&>>", ">&"]);

function checkRedirect(r: Redirect, reasons: Reasons): void {
  if (WRITE_REDIRECTS.has(r.op) && BLOCK_DEVICE.test(r.target.value)) {
    reasons.add(`writes over the device ${r.target.value} (its data is destroyed)`);
  }
}

function checkForkBomb(fn: FunctionDef, reasons: Reasons): void {
  const body: Script = {
    items: [{ list: { pipelines: [{ negated: false, commands: [fn.body] }], ops: [] }, background: false }],
  };
  let bomb = false;
  walkScript(body, {
    pipeline: (p, background) => {
      const callsItself = p.commands.some((c) => c.type === "simple" && c.words[0]?.value === fn.name);
      if (callsItself && (p.commands.length > 1 || background)) bomb = true;
    },
  });
  if (bomb) reasons.add(`fork bomb: function ${fn.name} starts copies of itself in a pipe or in the background`);
}
