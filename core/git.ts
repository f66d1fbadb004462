/*
 * The one git runner of agentd and its plugins. Running git: always `spawn("git", [...args])`, never a shell, so file names are data and never code. Output is
 * bounded (the child is killed past `maxBytes` and the result says `truncated`), every call has a deadline, and
 * settings that would run other programs from a repository's own config (fsmonitor hooks, external diff drivers,
 * textconv, pagers) are turned off on the command line.
 */
import { spawn } from "node:child_process";

export interface GitOptions {
  /** stdout bytes kept at most; past that git is stopped and `truncated` is set. Default 16 MiB. */
  maxBytes?: number;
  /** Deadline; git is killed past it and `timedOut` is set. Default 10 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Written to git's stdin (which is otherwise empty). */
  input?: string;
  /** Extra environment (e.g. an author identity for commits). */
  env?: Record<string, string>;
  /** Sees stdout as it arrives; returning true stops git (`stopped` is set). */
  onStdout?(chunk: Buffer): boolean | undefined;
}

export interface GitResult {
  /** Exit code; -1 when git could not be started (not installed), or was killed. */
  code: number;
  stdout: string;
  stderr: string;
  truncated: boolean;
  timedOut: boolean;
  /** git is not installed (or not on PATH). */
  missing: boolean;
  /** `onStdout` asked to stop. */
  stopped: boolean;
}

const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 10_000;
const STDERR_MAX = 64 * 1024;

/** `-c` settings put before every command. */
const SAFE_CONFIG = [
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.quotePath=false",
  "-c",
  "core.pager=cat",
  "-c",
  "color.ui=false",
  "-c",
  "diff.noprefix=false",
  "-c",
  "diff.mnemonicPrefix=false",
  "-c",
  "diff.relative=false",
  "-c",
  "diff.suppressBlankEmpty=false",
];

/** agentd's own identity, for commits it makes where git has no other (shadow repositories, unset user config). */
export const AGENTD_GIT_IDENTITY: Readonly<Record<string, string>> = {
  GIT_AUTHOR_NAME: "agentd",
  GIT_AUTHOR_EMAIL: "agentd@localhost",
  GIT_COMMITTER_NAME: "agentd",
  GIT_COMMITTER_EMAIL: "agentd@localhost",
};

const GIT_ENV: NodeJS.ProcessEnv = {
  GIT_OPTIONAL_LOCKS: "0",
  GIT_TERMINAL_PROMPT: "0",
  GIT_PAGER: "cat",
  LC_ALL: "C",
  LANG: "C",
};

/** Variables that would point git at another repository than the one in `cwd` (e.g. inherited from a hook). */
const REDIRECTING = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_COMMON_DIR",
  "GIT_NAMESPACE",
  "GIT_PREFIX",
];

function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...GIT_ENV };
  for (const k of REDIRECTING) delete env[k];
  return env;
}

/** Runs `git <args>` in `cwd` and collects its output. Never throws for a git failure: look at `code`. */
export function git(cwd: string, args: string[], opts: GitOptions = {}): Promise<GitResult> {
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = "";
    let truncated = false;
    let timedOut = false;
    let stopped = false;
    let settled = false;
    const child = spawn("git", [...SAFE_CONFIG, ...args], {
      cwd,
      env: { ...gitEnv(), ...opts.env },
      stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      windowsHide: true,
    });
    if (opts.input !== undefined) {
      child.stdin?.on("error", () => {}); // git may exit before reading it all; the exit code tells
      child.stdin?.end(opts.input);
    }
    const kill = () => child.kill("SIGKILL");
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const onAbort = () => kill();
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    const finish = (code: number, missing: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      const stdout = Buffer.concat(out).toString("utf8");
      resolve({ code, stdout, stderr: err, truncated, timedOut, missing, stopped });
    };
    child.stdout?.on("data", (chunk: Buffer) => {
      if (truncated || stopped) return;
      const room = maxBytes - outBytes;
      if (chunk.length > room) {
        out.push(chunk.subarray(0, room));
        outBytes = maxBytes;
        truncated = true;
        kill();
        return;
      }
      out.push(chunk);
      outBytes += chunk.length;
      if (opts.onStdout?.(chunk)) {
        stopped = true;
        kill();
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      if (err.length < STDERR_MAX) err += chunk.toString("utf8").slice(0, STDERR_MAX - err.length);
    });
    child.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "ENOENT") err = "git is not installed";
      else err ||= e.message;
      finish(-1, e.code === "ENOENT");
    });
    child.on("close", (code) => finish(code ?? -1, false));
  });
}

/** The first line of git's complaint, for error messages. */
export function gitComplaint(r: GitResult): string {
  if (r.missing) return "git is not installed";
  if (r.timedOut) return "git took too long";
  return (
    r.stderr
      .split("\n")
      .find((l) => l.trim())
      ?.replace(/^(fatal|error): /, "") ?? `git exited with ${r.code}`
  );
}

/** Splits NUL-separated output (`-z`), dropping the empty tail. */
export function splitZ(s: string): string[] {
  const parts = s.split("\0");
  if (parts.at(-1) === "") parts.pop();
  return parts;
}
