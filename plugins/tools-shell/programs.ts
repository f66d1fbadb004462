import { basename, hasLong, parseOptions } from "./argv.js";

/** What the classifier knows about programs that run other code: shells, interpreters, downloaders. */

export const DELETERS = new Set(["rm", "unlink", "shred"]);
export const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "yash", "posh", "rbash"]);
export const BLOCK_DEVICE =
  /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|rdisk\d|dm-\d|md\d|loop\d|sr\d|mapper\/|(mem|kmem|port)$)/;

export function shellInvocation(args: readonly string[]): { script?: string; readsStdin: boolean; file?: string } {
  let i = 1;
  let hasC = false;
  let hasS = false;
  while (i < args.length) {
    const a = args[i];
    if (a === "-") return { readsStdin: true };
    if (a === "--") {
      i++;
      break;
    }
    if (a.startsWith("--")) {
      i += a === "--rcfile" || a === "--init-file" ? 2 : 1;
      continue;
    }
    if (!/^[-+]./.test(a)) break;
    if (a[0] === "-" && a.includes("c")) hasC = true;
    if (a[0] === "-" && a.includes("s")) hasS = true;
    i += /^[-+][oO]$/.test(a) ? 2 : 1;
  }
  if (hasC) return { script: args[i] ?? "", readsStdin: false };
  if (hasS || i >= args.length || args[i] === "/dev/stdin") return { readsStdin: true };
  return { readsStdin: false, file: args[i] };
}

/** Interpreters and the options that give them their program on the command line instead of on stdin. */
const INTERPRETER_CODE_OPTIONS: Record<string, readonly string[]> = {
  python: ["-c", "-m"],
  pypy: ["-c", "-m"],
  perl: ["-e", "-E"],
  ruby: ["-e"],
  node: ["-e", "-p", "--eval", "--print"],
  nodejs: ["-e", "-p", "--eval", "--print"],
  bun: ["-e", "--eval", "-p", "--print"],
  deno: ["eval"],
  php: ["-r"],
  lua: ["-e"],
};

export function interpreterName(name: string): string | undefined {
  const base = name.replace(/[\d.]+$/, "");
  return base in INTERPRETER_CODE_OPTIONS ? base : undefined;
}

export type ProgramSource = { kind: "stdin" } | { kind: "file"; file: string } | { kind: "argument" };

/** Where a command takes the program it runs from, when it is a shell or an interpreter (or runs a file by path). */
export function programSource(args: readonly string[]): ProgramSource | undefined {
  const name = basename(args[0]);
  if (SHELLS.has(name)) {
    const inv = shellInvocation(args);
    if (inv.script !== undefined) return { kind: "argument" };
    return inv.readsStdin || inv.file === undefined ? { kind: "stdin" } : { kind: "file", file: inv.file };
  }
  if (name === "source" || name === ".") {
    const file = args[1];
    return file === undefined || file === "/dev/stdin" || file === "-" ? { kind: "stdin" } : { kind: "file", file };
  }
  const interp = interpreterName(name);
  if (!interp) return args[0].includes("/") ? { kind: "file", file: args[0] } : undefined;
  const codeOptions = INTERPRETER_CODE_OPTIONS[interp];
  for (let i = 1; i < args.length; i++) {
    const a = args[i];
    if (a === "-" || a === "/dev/stdin") return { kind: "stdin" };
    if (codeOptions.includes(a) || codeOptions.some((o) => o.length === 2 && a.startsWith(o)))
      return { kind: "argument" };
    if (/^-[a-zA-Z]+$/.test(a) && codeOptions.some((o) => o.length === 2 && a.includes(o[1])))
      return { kind: "argument" };
    if (a === "-W" || a === "-X") i++;
    else if (!a.startsWith("-")) return { kind: "file", file: a };
  }
  return { kind: "stdin" };
}

export function readsProgramFromStdin(args: readonly string[]): boolean {
  return programSource(args)?.kind === "stdin";
}

export const DOWNLOADERS = new Set(["curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-request", "GET"]);

/** What a command produces on stdout that would be dangerous to run: downloads and decoded blobs. */
export function producedCode(args: readonly string[]): string | undefined {
  const name = basename(args[0]);
  if (DOWNLOADERS.has(name)) return `code downloaded by ${name}`;
  const o = parseOptions(args.slice(1));
  if (name === "base64" && (o.short.has("d") || o.short.has("D") || hasLong(o, "decode"))) return "base64-decoded text";
  if (name === "xxd" && o.short.has("r")) return "hex-decoded text";
  if (name === "openssl" && args.includes("-d")) return "text decoded by openssl";
  return undefined;
}
