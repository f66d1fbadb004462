import { execFile } from "node:child_process";
import { isAbsolute, resolve } from "node:path";

export const HOOK_EVENTS = ["PreToolUse", "PostToolUse", "WorktreeCreate"] as const;
/** Other names accepted for an event in hooks.json. */
const EVENT_ALIASES: Record<string, HookEvent> = { worktree: "WorktreeCreate" };
export type HookEvent = (typeof HOOK_EVENTS)[number];

export interface HookSpec {
  event: HookEvent;
  /** Tool-name pattern: empty or "*" matches every tool, else an anchored regular expression ("write|edit"). */
  matcher: string;
  /** argv: the program (relative paths resolve against `baseDir`) and its arguments. Never a shell string. */
  command: string[];
  timeoutMs: number;
  /** The directory the hook was configured in: the project root, or the daemon home for global hooks. */
  baseDir: string;
  source: "global" | "project";
}

const DEFAULT_TIMEOUT_S = 60;
const MAX_TIMEOUT_S = 600;

function parseCommand(v: unknown): string[] | undefined {
  if (typeof v === "string" && v.trim()) return [v.trim()];
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "string") && (v[0] as string).trim()) {
    return v as string[];
  }
  return undefined;
}

function parseTimeout(v: unknown): number {
  const s = typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.min(v, MAX_TIMEOUT_S) : DEFAULT_TIMEOUT_S;
  return Math.round(s * 1000);
}

/**
 * Reads a hooks value: `{"PreToolUse": [{"matcher": "bash", "command": ["./check.sh"], "timeout": 30}], ...}`, or
 * the same wrapped in `{"hooks": ...}`. Claude Code's nested form (`{"matcher", "hooks": [{"type": "command",
 * "command"}]}`) is accepted too. A string command is one program path, not a shell line. Problems are reported,
 * never thrown.
 */
export function parseHooks(raw: unknown, baseDir: string, source: HookSpec["source"], problems: string[]): HookSpec[] {
  if (raw === undefined || raw === null) return [];
  let value = raw as Record<string, unknown>;
  if (typeof value === "object" && !Array.isArray(value) && "hooks" in value && typeof value.hooks === "object") {
    value = value.hooks as Record<string, unknown>;
  }
  if (typeof value !== "object" || Array.isArray(value)) {
    problems.push("hooks must be an object keyed by event name");
    return [];
  }
  const out: HookSpec[] = [];
  for (const [name, entries] of Object.entries(value)) {
    const event = EVENT_ALIASES[name] ?? name;
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      problems.push(`unsupported hook event "${event}" (supported: ${HOOK_EVENTS.join(", ")})`);
      continue;
    }
    if (!Array.isArray(entries)) {
      problems.push(`hooks.${event} must be an array`);
      continue;
    }
    entries.forEach((entry: unknown, i) => {
      const e = (entry ?? {}) as Record<string, unknown>;
      const matcher = typeof e.matcher === "string" ? e.matcher : "";
      const inner = Array.isArray(e.hooks) ? (e.hooks as Array<Record<string, unknown>>) : [e];
      for (const h of inner) {
        const command = parseCommand(h?.command);
        if (!command || (h.type !== undefined && h.type !== "command")) {
          problems.push(`hooks.${event}[${i}]: "command" must be a non-empty array of strings (program and arguments)`);
          continue;
        }
        out.push({ event: event as HookEvent, matcher, command, timeoutMs: parseTimeout(h.timeout), baseDir, source });
      }
    });
  }
  return out;
}

export function matchesTool(matcher: string, tool: string): boolean {
  if (matcher === "" || matcher === "*") return true;
  try {
    return new RegExp(`^(?:${matcher})$`).test(tool);
  } catch {
    return matcher === tool;
  }
}

export function describeHook(h: HookSpec): string {
  return `${h.event}${h.matcher ? ` [${h.matcher}]` : ""}: ${h.command.join(" ")}`;
}

export interface HookOutcome {
  /** Exit code; null when killed or not started. */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Why it could not run (ENOENT, EACCES...). */
  error?: string;
}

const MAX_OUTPUT = 256 * 1024;

/**
 * Runs one hook with execFile (argv, no shell) in `cwd`, the JSON payload on stdin, a timeout and bounded output.
 * Never rejects.
 */
export function runHook(
  hook: HookSpec,
  payload: unknown,
  opts: {
    cwd: string;
    env: NodeJS.ProcessEnv;
    signal?: AbortSignal;
    /** Confines the hook (project hooks): the program to spawn instead; a string refuses to run it, saying why. */
    wrap?: (argv: string[]) => { file: string; args: string[] } | string;
  },
): Promise<HookOutcome> {
  const [program, ...rest] = hook.command as [string, ...string[]];
  const resolved = program.includes("/") && !isAbsolute(program) ? resolve(hook.baseDir, program) : program;
  const wrapped = opts.wrap ? opts.wrap([resolved, ...rest]) : { file: resolved, args: rest };
  if (typeof wrapped === "string") {
    return Promise.resolve({ code: null, stdout: "", stderr: "", timedOut: false, error: wrapped });
  }
  const { file, args } = wrapped;
  return new Promise((done) => {
    let child: ReturnType<typeof execFile>;
    try {
      child = execFile(
        file,
        args,
        {
          cwd: opts.cwd,
          env: opts.env,
          timeout: hook.timeoutMs,
          maxBuffer: MAX_OUTPUT,
          signal: opts.signal,
          windowsHide: true,
        },
        (err, stdout, stderr) => {
          const out = { stdout: String(stdout), stderr: String(stderr) };
          if (!err) return done({ code: 0, ...out, timedOut: false });
          const e = err as NodeJS.ErrnoException & { code?: number | string; killed?: boolean };
          if (typeof e.code === "number") return done({ code: e.code, ...out, timedOut: false });
          if (e.killed) return done({ code: null, ...out, timedOut: true });
          done({ code: null, ...out, timedOut: false, error: e.code ? `${e.code}: ${e.message}` : e.message });
        },
      );
    } catch (err) {
      done({ code: null, stdout: "", stderr: "", timedOut: false, error: (err as Error).message });
      return;
    }
    // A hook that does not read its stdin must not fail the write (EPIPE).
    child.stdin?.on("error", () => {});
    child.stdin?.end(JSON.stringify(payload));
  });
}

/** A JSON decision on stdout (`{"decision": "block", "reason": "..."}`), as Claude Code hooks may print. */
export function stdoutDecision(stdout: string): { block: boolean; reason?: string } {
  const text = stdout.trim();
  if (!text.startsWith("{")) return { block: false };
  try {
    const j = JSON.parse(text) as { decision?: unknown; reason?: unknown };
    const block = j.decision === "block" || j.decision === "deny";
    return { block, reason: typeof j.reason === "string" ? j.reason : undefined };
  } catch {
    return { block: false };
  }
}
