import { parseOptions } from "./argv.js";
import type { Command, Redirect, Script, SimpleCommand, Word } from "./ast.js";
import { parseShell, ShellSyntaxError } from "./parser.js";

/**
 * The plan-mode gate of `bash`: a command passes only when every command in it is on a read-only allowlist
 * (checked per command and, where a command has writing options, per option), joined by pipes, `&&`, `||` or
 * `;`. Redirections that write (other than to /dev/null or fd duplications), command and process substitution,
 * background jobs, functions and control structures are refused with a reason naming the offending part.
 */

export type PlanModeVerdict = { allowed: true } | { allowed: false; reason: string };

class Refusal extends Error {}

function refuse(reason: string): never {
  throw new Refusal(reason);
}

export function checkPlanModeCommand(command: string): PlanModeVerdict {
  try {
    checkScript(parseShell(command));
    return { allowed: true };
  } catch (err) {
    if (err instanceof Refusal) return { allowed: false, reason: err.message };
    if (err instanceof ShellSyntaxError)
      return { allowed: false, reason: `the command could not be parsed (${err.detail})` };
    return { allowed: false, reason: "the command could not be checked" };
  }
}

const KIND_LABEL: Record<string, string> = {
  subshell: "a subshell ( ... )",
  group: "a command group { ... }",
  if: "an if statement",
  while: "a while loop",
  until: "an until loop",
  for: "a for loop",
  select: "a select loop",
  case: "a case statement",
  arith: "an arithmetic command (( ... ))",
};

function checkScript(script: Script): void {
  for (const item of script.items) {
    if (item.background) refuse('"&" (running in the background) is not allowed in plan mode');
    for (const p of item.list.pipelines) for (const c of p.commands) checkCommand(c);
  }
}

function checkCommand(c: Command): void {
  if (c.type === "function") refuse(`defining a function ("${c.name}") is not allowed in plan mode`);
  for (const r of c.redirects) checkRedirect(r);
  if (c.type === "compound") {
    if (c.kind !== "test") {
      refuse(
        `${KIND_LABEL[c.kind] ?? c.kind} is not allowed in plan mode; use simple commands joined by |, &&, || or ;`,
      );
    }
    for (const w of c.words) checkWord(w);
    return;
  }
  checkSimple(c);
}

function checkWord(w: Word): void {
  if (w.procSubst) refuse(`process substitution in "${w.raw}" is not allowed in plan mode`);
  if (w.subs.length) refuse(`command substitution in "${w.raw}" is not allowed in plan mode`);
}

function checkRedirect(r: Redirect): void {
  checkWord(r.target);
  if (r.heredoc) checkWord(r.heredoc);
  if (r.op === "<" || r.op === "<<" || r.op === "<<-" || r.op === "<<<") return;
  if ((r.op === ">&" || r.op === "<&") && /^(\d+|-)$/.test(r.target.value)) return;
  if (r.op !== "<>" && r.target.value === "/dev/null") return;
  refuse(`the redirection "${r.fd ?? ""}${r.op}${r.target.raw}" writes to a file, which plan mode does not allow`);
}

/** Variables that only change formatting; anything else could change what a program runs (PAGER, LD_PRELOAD). */
const HARMLESS_VARIABLE = /^(LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR|FORCE_COLOR|CLICOLOR|COLUMNS|LINES|TERM)$/;

function checkSimple(c: SimpleCommand): void {
  for (const a of c.assigns) {
    checkWord(a);
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(a.raw)?.[0] ?? a.raw;
    if (!HARMLESS_VARIABLE.test(name)) refuse(`setting the variable "${name}" is not allowed in plan mode`);
  }
  for (const w of c.words) checkWord(w);
  if (!c.words.length) return;
  const first = c.words[0];
  if (first.dynamic || first.glob)
    refuse(`the command name "${first.raw}" is only known at run time; plan mode runs allowlisted commands only`);
  checkArgv(c.words.map((w) => w.value));
}

function checkArgv(argv: readonly string[]): void {
  const name = argv[0];
  if (name.includes("/"))
    refuse(`running "${name}" by path is not allowed in plan mode; only allowlisted commands by name`);
  const rule = ALLOWLIST.get(name);
  if (!rule) refuse(`"${name}" is not on the plan-mode read-only allowlist`);
  const problem = rule(argv);
  if (problem) refuse(problem);
}

/** Returns a reason when this use of an allowlisted command could write or run something. */
type AllowRule = (argv: readonly string[]) => string | undefined;

const always: AllowRule = () => undefined;

function forbidOptions(forbidden: readonly string[], why: string): AllowRule {
  return (argv) => {
    const hit = argv
      .slice(1)
      .find((a) => forbidden.some((f) => a === f || (f.startsWith("--") && a.startsWith(`${f}=`))));
    return hit === undefined ? undefined : `"${argv[0]} ${hit}" ${why}, which plan mode does not allow`;
  };
}

/** Single-dash option clusters containing one of `letters` (`sort -uo out`). */
function clusterHas(argv: readonly string[], letters: string): string | undefined {
  return argv.slice(1).find((a) => /^-[^-]/.test(a) && [...a.slice(1)].some((l) => letters.includes(l)));
}

const find = forbidOptions(
  ["-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"],
  "deletes files, runs commands or writes files",
);

const fd: AllowRule = (argv) => {
  const hit = argv.slice(1).find((a) => a === "--exec" || a === "--exec-batch" || /^-[a-zA-Z]*[xX]/.test(a));
  return hit ? `"${argv[0]} ${hit}" runs a command for each match, which plan mode does not allow` : undefined;
};

const sort: AllowRule = (argv) => {
  const hit =
    argv.slice(1).find((a) => a.startsWith("--output") || a.startsWith("--compress-program")) ?? clusterHas(argv, "o");
  return hit ? `"sort ${hit}" writes a file or runs a program, which plan mode does not allow` : undefined;
};

const uniq: AllowRule = (argv) => {
  const o = parseOptions(argv.slice(1), {
    shortWithValue: "fsw",
    longWithValue: ["skip-fields", "skip-chars", "check-chars"],
  });
  return o.operands.length > 1
    ? `"uniq ${o.operands.join(" ")}" writes its output to a file, which plan mode does not allow`
    : undefined;
};

const date: AllowRule = (argv) => {
  const o = parseOptions(argv.slice(1), { shortWithValue: "drf", longWithValue: ["date", "reference", "file"] });
  if (o.short.has("s") || o.long.has("set")) return '"date -s" sets the clock, which plan mode does not allow';
  const setting = o.operands.find((x) => !x.startsWith("+"));
  return setting ? `"date ${setting}" sets the clock, which plan mode does not allow` : undefined;
};

const yq: AllowRule = (argv) => {
  const hit = argv.slice(1).find((a) => a.startsWith("--inplace")) ?? clusterHas(argv, "i");
  return hit ? `"yq ${hit}" edits files in place, which plan mode does not allow` : undefined;
};

const xxd: AllowRule = (argv) => {
  const o = parseOptions(argv.slice(1), { shortWithValue: "cglosnC" });
  return o.operands.length > 1
    ? `"xxd ${o.operands.join(" ")}" writes to a file, which plan mode does not allow`
    : undefined;
};

const hostname: AllowRule = (argv) =>
  parseOptions(argv.slice(1)).operands.length
    ? "hostname with an argument renames the machine, which plan mode does not allow"
    : undefined;

const command: AllowRule = (argv) =>
  argv.length > 1 && argv.slice(1).some((a) => /^-[pvV]*[vV]/.test(a))
    ? undefined
    : '"command" is only allowed as "command -v <name>" in plan mode';

/* ---------- sed: only scripts made of printing and in-memory editing commands ---------- */

const SED_ADDRESS = String.raw`(?:\d+(?:~\d+)?|\$|/(?:[^/\\]|\\.)*/I?)`;
const SED_RANGE = String.raw`(?:${SED_ADDRESS}(?:\s*,\s*(?:${SED_ADDRESS}|[+~]\d+))?\s*!?)?`;
const SED_DELIMITED = String.raw`(?:[^/\\]|\\.)*`;
const SED_COMMAND = String.raw`(?:[pdqQ]\s*\d*|[=lnNPDgGhHxz]|s/${SED_DELIMITED}/${SED_DELIMITED}/[gpiImM0-9]*|y/${SED_DELIMITED}/${SED_DELIMITED}/)`;
const SAFE_SED = new RegExp(String.raw`^\s*${SED_RANGE}\s*${SED_COMMAND}?\s*$`);

function safeSedScript(script: string): boolean {
  return script.split(/[;\n]/).every((part) => SAFE_SED.test(part));
}

const sed: AllowRule = (argv) => {
  const scripts: string[] = [];
  const operands: string[] = [];
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-e" || a === "--expression") scripts.push(argv[++i] ?? "");
    else if (a.startsWith("--expression=")) scripts.push(a.slice("--expression=".length));
    else if (a === "-f" || a.startsWith("--file")) return '"sed -f" runs a script file, which plan mode does not allow';
    else if (a.startsWith("--in-place") || (/^-[^-]/.test(a) && a.slice(1).split("e")[0].includes("i"))) {
      return `"sed ${a}" edits files in place, which plan mode does not allow`;
    } else if (/^-[^-]/.test(a) && a.includes("e")) {
      const attached = a.slice(a.indexOf("e") + 1);
      scripts.push(attached || (argv[++i] ?? ""));
    } else if (a === "-l") i++;
    else if (!a.startsWith("-") || a === "-") operands.push(a);
  }
  if (!scripts.length && operands.length) scripts.push(operands[0]);
  const unsafe = scripts.find((s) => !safeSedScript(s));
  return unsafe === undefined
    ? undefined
    : `the sed script "${unsafe}" is not allowed in plan mode (only printing commands such as "10,20p" or "s/a/b/g")`;
};

/* ---------- xargs: allowed when the command it runs is ---------- */

const XARGS_VALUE_OPTIONS = ["-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s"];

const xargs: AllowRule = (argv) => {
  let i = 1;
  while (i < argv.length && argv[i].startsWith("-")) {
    if (argv[i] === "--") {
      i++;
      break;
    }
    i += XARGS_VALUE_OPTIONS.includes(argv[i]) ? 2 : 1;
  }
  if (i < argv.length) checkArgv(argv.slice(i));
  return undefined;
};

/* ---------- git: read-only subcommands, and listing forms of the others ---------- */

const GIT_READ_ONLY = new Set([
  "status",
  "log",
  "show",
  "diff",
  "blame",
  "annotate",
  "rev-parse",
  "ls-files",
  "ls-tree",
  "ls-remote",
  "shortlog",
  "describe",
  "grep",
  "cat-file",
  "count-objects",
  "merge-base",
  "name-rev",
  "for-each-ref",
  "show-ref",
  "rev-list",
  "whatchanged",
  "diff-tree",
  "diff-files",
  "diff-index",
  "var",
  "help",
  "version",
  "check-ignore",
  "check-attr",
  "show-branch",
  "cherry",
  "range-diff",
  "verify-commit",
  "verify-tag",
]);

const LIST_FILTERS = ["list", "verbose", "contains", "no-contains", "merged", "no-merged", "points-at"];

function gitListing(
  rest: readonly string[],
  forbiddenShort: string,
  forbiddenLong: readonly string[],
  listShort: string,
): boolean {
  const o = parseOptions(rest, {
    longWithValue: ["sort", "format", "contains", "no-contains", "merged", "no-merged", "points-at"],
  });
  if ([...forbiddenShort].some((l) => o.short.has(l)) || forbiddenLong.some((l) => o.long.has(l))) return false;
  const listing = [...listShort].some((l) => o.short.has(l)) || LIST_FILTERS.some((l) => o.long.has(l));
  return o.operands.length === 0 || listing;
}

const GIT_LISTING: Record<string, (rest: readonly string[]) => boolean> = {
  branch: (rest) =>
    gitListing(
      rest,
      "dDmMcCfut",
      [
        "delete",
        "move",
        "copy",
        "force",
        "set-upstream-to",
        "unset-upstream",
        "edit-description",
        "track",
        "no-track",
        "create-reflog",
      ],
      "lv",
    ),
  tag: (rest) =>
    gitListing(
      rest,
      "asufdmFe",
      ["annotate", "sign", "local-user", "force", "delete", "message", "file", "edit", "create-reflog"],
      "ln",
    ),
  remote: (rest) => {
    const args = rest.filter((a) => a !== "-v" && a !== "--verbose");
    return args.length === 0 || args[0] === "show" || args[0] === "get-url";
  },
  config: (rest) => {
    const reads = ["--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--list", "-l"];
    const writes = [
      "--unset",
      "--unset-all",
      "--add",
      "--replace-all",
      "--remove-section",
      "--rename-section",
      "--edit",
      "-e",
    ];
    if (rest.some((a) => writes.includes(a))) return false;
    return rest.some((a) => reads.includes(a)) || rest[0] === "get" || rest[0] === "list";
  },
  stash: (rest) => rest[0] === "list" || rest[0] === "show",
  worktree: (rest) => rest[0] === "list",
  notes: (rest) => rest[0] === "list" || rest[0] === "show",
  reflog: (rest) => rest[0] === undefined || !["expire", "delete", "drop"].includes(rest[0]),
  submodule: (rest) => rest.length === 0 || rest[0] === "status",
};

const GIT_VALUE_OPTIONS = ["-C", "--git-dir", "--work-tree", "--namespace"];

const git: AllowRule = (argv) => {
  let i = 1;
  while (i < argv.length && argv[i].startsWith("-")) {
    const a = argv[i];
    if (a === "-c" || a.startsWith("--config-env") || a.startsWith("--exec-path")) {
      return `"git ${a}" can make git run other programs, which plan mode does not allow`;
    }
    if (a === "--version" || a === "--help") return undefined;
    i += GIT_VALUE_OPTIONS.includes(a) ? 2 : 1;
  }
  const sub = argv[i];
  if (sub === undefined) return undefined;
  const rest = argv.slice(i + 1);
  if (GIT_READ_ONLY.has(sub)) {
    const hit = rest.find((a) => a.startsWith("--output") || a === "-O" || a.startsWith("--open-files-in-pager"));
    return hit ? `"git ${sub} ${hit}" writes a file or opens a program, which plan mode does not allow` : undefined;
  }
  const listing = Object.hasOwn(GIT_LISTING, sub) ? GIT_LISTING[sub] : undefined;
  if (!listing) return `"git ${sub}" is not a read-only git command, which plan mode requires`;
  return listing(rest)
    ? undefined
    : `"git ${[sub, ...rest].join(" ")}" changes the repository; plan mode only allows listing`;
};

const READ_ONLY_COMMANDS = [
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "grep",
  "egrep",
  "fgrep",
  "file",
  "stat",
  "du",
  "df",
  "pwd",
  "echo",
  "printf",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "which",
  "whereis",
  "whoami",
  "id",
  "uname",
  "tac",
  "rev",
  "cut",
  "nl",
  "column",
  "tr",
  "paste",
  "join",
  "fold",
  "fmt",
  "expand",
  "unexpand",
  "comm",
  "cmp",
  "diff",
  "strings",
  "od",
  "hexdump",
  "md5sum",
  "sha1sum",
  "sha224sum",
  "sha256sum",
  "sha384sum",
  "sha512sum",
  "b2sum",
  "cksum",
  "true",
  "false",
  "test",
  "[",
  "seq",
  "cd",
  "type",
  "printenv",
  "nproc",
  "ps",
  "jq",
  "groups",
  "uptime",
  "free",
  "locale",
  "sleep",
  "man",
];

const ALLOWLIST = new Map<string, AllowRule>([
  ...READ_ONLY_COMMANDS.map((n): [string, AllowRule] => [n, always]),
  ["find", find],
  ["fd", fd],
  ["fdfind", fd],
  ["rg", forbidOptions(["--pre"], "runs a preprocessor program")],
  ["tree", forbidOptions(["-o", "-R", "--output"], "writes files")],
  ["sort", sort],
  ["uniq", uniq],
  ["date", date],
  ["yq", yq],
  ["xxd", xxd],
  ["hostname", hostname],
  ["command", command],
  ["sed", sed],
  ["xargs", xargs],
  ["git", git],
]);

/** The commands plan mode accepts (for the tool description and the docs). */
export const PLAN_MODE_COMMANDS: readonly string[] = [...ALLOWLIST.keys()].sort();
