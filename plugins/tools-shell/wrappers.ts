import { basename, display, skipWrapperOptions } from "./argv.js";

/** Commands that run their arguments as a command: sudo, env, nohup, xargs, time, timeout, ... */

export interface Unwrapped {
  /** Index of the command that really runs, or -1 when there is none. */
  start: number;
  reasons: string[];
  /** Command strings the wrappers run through a shell (`su -c`, `env -S`, `watch`). */
  scripts: string[];
  viaXargs: boolean;
}

const SUDO_VALUE_OPTIONS = [
  "-u",
  "-g",
  "-h",
  "-p",
  "-C",
  "-D",
  "-r",
  "-t",
  "-U",
  "-T",
  "--user",
  "--group",
  "--host",
  "--prompt",
  "--chdir",
  "--role",
  "--type",
  "--other-user",
  "--close-from",
  "--command-timeout",
];
const XARGS_VALUE_OPTIONS = [
  "-a",
  "-d",
  "-E",
  "-I",
  "-L",
  "-n",
  "-P",
  "-s",
  "--arg-file",
  "--delimiter",
  "--eof",
  "--replace",
  "--max-lines",
  "--max-args",
  "--max-procs",
  "--max-chars",
  "--process-slot-var",
];
/** Wrappers that only take options and then run their operands as a command, with their value-taking options. */
const PLAIN_WRAPPERS: Record<string, readonly string[]> = {
  nohup: [],
  time: ["-f", "-o", "--format", "--output"],
  builtin: [],
  exec: ["-a"],
  nice: ["-n", "--adjustment"],
  ionice: ["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
  stdbuf: ["-i", "-o", "-e", "--input", "--output", "--error"],
  setsid: [],
  chronic: [],
  unbuffer: [],
  caffeinate: ["-t", "-w"],
};
const DOAS_VALUE_OPTIONS = ["-u", "-C"];

export function unwrap(argv: readonly string[]): Unwrapped {
  const out: Unwrapped = { start: 0, reasons: [], scripts: [], viaXargs: false };
  let i = 0;
  for (let guard = 0; guard < 64 && i >= 0 && i < argv.length; guard++) {
    const name = basename(argv[i]);
    if (name === "sudo" || name === "doas" || name === "pkexec" || name === "run0") {
      out.reasons.push(`runs with elevated privileges: ${display(argv.slice(i))}`);
      i = skipWrapperOptions(argv, i + 1, name === "doas" ? DOAS_VALUE_OPTIONS : SUDO_VALUE_OPTIONS);
    } else if (name === "su") {
      out.reasons.push(`runs as another user: ${display(argv.slice(i))}`);
      for (let j = i + 1; j < argv.length; j++) {
        if (argv[j] === "-c" || argv[j] === "--command") out.scripts.push(argv[j + 1] ?? "");
        else if (argv[j].startsWith("--command=")) out.scripts.push(argv[j].slice("--command=".length));
      }
      i = -1;
    } else if (name === "env") {
      i = unwrapEnv(argv, i + 1, out);
    } else if (name === "command") {
      const rest = argv.slice(i + 1);
      const firstOperand = rest.findIndex((a) => !a.startsWith("-"));
      const options = firstOperand < 0 ? rest : rest.slice(0, firstOperand);
      i = options.some((a) => /^-[a-zA-Z]*[vV]/.test(a)) ? -1 : skipWrapperOptions(argv, i + 1);
    } else if (name === "timeout") {
      i = skipWrapperOptions(argv, i + 1, ["-s", "-k", "--signal", "--kill-after"]);
      if (i >= 0) i = i + 1 < argv.length ? i + 1 : -1;
    } else if (name === "flock") {
      i = skipWrapperOptions(argv, i + 1, ["-w", "-E", "--timeout", "--conflict-exit-code"]);
      if (i >= 0) i = i + 1 < argv.length ? i + 1 : -1;
    } else if (name === "watch") {
      const j = skipWrapperOptions(argv, i + 1, ["-n", "--interval"]);
      if (j >= 0) out.scripts.push(argv.slice(j).join(" "));
      i = -1;
    } else if (name === "xargs") {
      out.viaXargs = true;
      i = skipWrapperOptions(argv, i + 1, XARGS_VALUE_OPTIONS);
    } else if (name === "busybox" || name === "toybox") {
      i = i + 1 < argv.length ? i + 1 : -1;
    } else if (name in PLAIN_WRAPPERS) {
      i = skipWrapperOptions(argv, i + 1, PLAIN_WRAPPERS[name]);
    } else break;
  }
  out.start = i < argv.length ? i : -1;
  return out;
}

/** `env [-i] [-u NAME] [-C DIR] [NAME=VALUE]... [-S STRING] [COMMAND...]`. */
function unwrapEnv(argv: readonly string[], from: number, out: Unwrapped): number {
  let j = from;
  while (j < argv.length) {
    const a = argv[j];
    if (a === "--") return j + 1;
    let split: string | undefined;
    if (a === "-S" || a === "--split-string") {
      split = argv[j + 1] ?? "";
      j += 2;
    } else if (a.startsWith("--split-string=")) {
      split = a.slice("--split-string=".length);
      j++;
    } else if (/^-S./.test(a)) {
      split = a.slice(2);
      j++;
    } else if (a === "-u" || a === "-C" || a === "--unset" || a === "--chdir") {
      j += 2;
      continue;
    } else if (a.startsWith("-") || /^[A-Za-z_][A-Za-z0-9_]*=/.test(a)) {
      j++;
      continue;
    } else return j;
    out.scripts.push([split, ...argv.slice(j)].join(" "));
    return -1;
  }
  return -1;
}
