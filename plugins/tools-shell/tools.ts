import {
  commandEnv,
  defineTool,
  type PermissionRules,
  type Sandbox,
  T,
  type ToolContext,
  type ToolDefinition,
  ToolFailure,
  type ToolResult,
  toolError,
} from "../../core/index.js";
import { decide } from "./approval.js";
import { HeadTailBuffer } from "./output.js";
import { checkPlanModeCommand } from "./plan-mode.js";
import { ShellProcess } from "./process.js";
import type { BackgroundTasks } from "./tasks.js";

export interface ShellLimits {
  defaultTimeoutSeconds: number;
  maxTimeoutSeconds: number;
  maxOutputChars: number;
  killGraceMs: number;
}

export const DEFAULT_SHELL_LIMITS: ShellLimits = {
  defaultTimeoutSeconds: 120,
  maxTimeoutSeconds: 600,
  maxOutputChars: 30_000,
  killGraceMs: 2_000,
};

/** Longer command strings are refused: nobody types them, and they would only fill the confirmation prompt. */
const MAX_COMMAND_CHARS = 100_000;

/** An argument the schema cannot rule out (a blank command, an unusable filter). */
export function badArgument(message: string): ToolFailure {
  return new ToolFailure("invalid_arguments", message, "Fix the arguments and call the tool again.", true);
}

/** The services a command's approval and confinement come from (resolved per call: plugins may be absent). */
export interface ShellServices {
  sandbox(): Sandbox | undefined;
  rules(): PermissionRules | undefined;
}

/** What a command runs as: the sandbox's wrapper around `/bin/bash -c`, with the scrubbed environment. */
export interface Launch {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  confined: boolean;
}

/**
 * Without a sandbox service nothing is confined (and every command was asked about), the environment still scrubbed.
 * In plan mode the sandbox backs the read-only allowlist: only the plans directory is writable.
 */
function launchFor(sandbox: Sandbox | undefined, command: string, ctx: ToolContext, network: boolean): Launch {
  const argv = ["/bin/bash", "-c", command];
  if (!sandbox) return { file: argv[0], args: argv.slice(1), env: commandEnv(process.env), confined: false };
  const plan = ctx.mode === "plan" ? { writable: [ctx.plansDir], gitWritable: false } : {};
  return sandbox.wrap({ argv, cwd: ctx.cwd, env: sandbox.env(), network, ...plan });
}

function exitLine(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `Killed by signal ${signal}`;
  return `Exit code: ${code ?? "unknown"}`;
}

const ABANDONED_NOTE =
  "[Note: processes the command started in the background still held its output when it exited; their further " +
  "output is not captured. Use run_in_background: true for servers and watchers.]";

export function createBashTool(limits: ShellLimits, tasks: BackgroundTasks, services: ShellServices): ToolDefinition {
  return defineTool({
    name: "bash",
    description:
      "Runs a command line with /bin/bash -c in the session's working directory and returns its combined stdout " +
      `and stderr (capped at ${limits.maxOutputChars} characters: the start and the end are kept) and its exit code. ` +
      "A non-zero exit code is reported, not treated as a failure. The command and everything it starts are killed " +
      `after "timeout" seconds (default ${limits.defaultTimeoutSeconds}, max ${limits.maxTimeoutSeconds}) or when ` +
      "the turn is aborted. stdin is empty: do not run interactive programs. For servers, watchers and other " +
      'long-running commands set "run_in_background": true, then read their output with bash_output and stop ' +
      "them with bash_kill. Commands run in a sandbox: files outside the working directory are read-only, secrets " +
      '(~/.ssh, credentials) are hidden, and there is no network unless the user allows it (set "network": ' +
      "true when a command needs it; package installs and git fetch/push are recognised). Risky commands " +
      "(recursive deletes, force pushes, sudo, ...) and network access ask the user first, unless a rule allows them. In " +
      "plan mode only read-only commands run (ls, cat, grep, rg, find, git status/log/diff/show, ...), without " +
      "redirections into files, substitutions or background jobs. Prefer the read, grep, glob and ls tools for " +
      "reading files.",
    parameters: T.Object({
      command: T.String({ minLength: 1, description: "The command line to run (bash syntax)." }),
      timeout: T.Optional(
        T.Number({
          exclusiveMinimum: 0,
          maximum: limits.maxTimeoutSeconds,
          description:
            `Seconds before the command is killed (default ${limits.defaultTimeoutSeconds}, max ` +
            `${limits.maxTimeoutSeconds}). For a background task: its maximum lifetime (default: none).`,
        }),
      ),
      run_in_background: T.Optional(
        T.Boolean({ description: "Start as a background task and return its task id at once (not in plan mode)." }),
      ),
      network: T.Optional(
        T.Boolean({
          description:
            "The command needs the network (asks the user unless allowed); package installs and git " +
            "fetch/pull/push are recognised without it.",
        }),
      ),
    }),
    execute: async (args, ctx) => {
      const command = args.command;
      if (!command.trim()) throw badArgument('"command" is required.');
      if (command.length > MAX_COMMAND_CHARS)
        throw badArgument(`"command" is longer than ${MAX_COMMAND_CHARS} characters.`);
      const timeout = args.timeout;
      const background = args.run_in_background === true;
      if (ctx.signal.aborted) return abortedResult("");

      if (ctx.mode === "plan") {
        const refusal = planModeRefusal(command, background);
        if (refusal) return refusal;
      }
      const sandbox = services.sandbox();
      const status = await sandbox?.ready();
      if (ctx.signal.aborted) return abortedResult("");
      const approval = decide({
        command,
        wantsNetwork: args.network === true,
        cwd: ctx.cwd,
        sessionId: ctx.sessionId,
        permissionMode: ctx.permissionMode,
        rules: services.rules(),
        sandbox,
        status,
      });
      if (approval.kind === "deny") {
        return toolError(
          "permission_denied",
          `Not run: the rule "${approval.rule.pattern}" (${approval.rule.scope}, ${approval.rule.source}) denies ${approval.part}.`,
          "A permission rule forbids this command: do not retry it or a variant of it. Ask the user how to proceed.",
          false,
          { rule: approval.rule.id },
        );
      }
      if (approval.kind === "ask") {
        const allowed = await ctx.confirm({
          tool: "bash",
          command,
          reason: approval.text,
          reasons: approval.reasons,
          ...(approval.suggestedRule ? { suggestedRule: approval.suggestedRule } : {}),
        });
        if (ctx.signal.aborted) return abortedResult("");
        if (!allowed) {
          return toolError(
            "permission_denied",
            `The user declined to run this command (${approval.text}). It was not run.`,
            "The user declined this command: do not retry it or a variant of it. Ask the user how to proceed, " +
              "or take another approach.",
            false,
            { reasons: approval.reasons },
          );
        }
      }
      const launch = launchFor(sandbox, command, ctx, approval.network);
      if (background) return startBackground(tasks, command, launch, timeout, ctx);
      return runForeground(launch, (timeout ?? limits.defaultTimeoutSeconds) * 1000, limits, ctx);
    },
  });
}

function planModeRefusal(command: string, background: boolean): ToolResult | undefined {
  const fix =
    "Plan mode only runs read-only commands. Use read-only ones (ls, cat, head, grep, rg, find, git status/log/" +
    "diff/show, ...) or the read/grep/glob/ls tools; anything that changes files waits until the plan is approved " +
    "and the session is back in build mode.";
  if (background) return toolError("permission_denied", "run_in_background is not available in plan mode.", fix);
  const verdict = checkPlanModeCommand(command);
  if (verdict.allowed) return undefined;
  return toolError("permission_denied", `Not run: in plan mode ${verdict.reason}.`, fix, false, { planMode: true });
}

function abortedResult(output: string): ToolResult {
  const text = output ? `\n\nOutput before it was stopped:\n${output}` : "";
  return toolError(
    "aborted",
    `The command was stopped (with everything it started) because the turn was aborted.${text}`,
    "The turn was aborted; do not retry unless asked to.",
  );
}

async function runForeground(
  launch: Launch,
  timeoutMs: number,
  limits: ShellLimits,
  ctx: ToolContext,
): Promise<ToolResult> {
  const started = Date.now();
  const proc = new ShellProcess({ ...launch, cwd: ctx.cwd, killGraceMs: limits.killGraceMs });
  const output = new HeadTailBuffer(limits.maxOutputChars);
  const progress = liveOutput(ctx);
  proc.onOutput((text) => {
    output.append(text);
    progress.push(text);
  });
  let stoppedBy: "timeout" | "abort" | undefined;
  const stop = (why: "timeout" | "abort") => {
    stoppedBy ??= why;
    void proc.stop();
  };
  const timer = setTimeout(() => stop("timeout"), timeoutMs);
  const onAbort = () => stop("abort");
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  let exit: Awaited<typeof proc.done>;
  try {
    exit = await proc.done;
    if (stoppedBy) await proc.stop();
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", onAbort);
    progress.end();
  }

  if (exit.spawnError) {
    return toolError(
      "execution_failed",
      `Could not start /bin/bash in ${ctx.cwd}: ${exit.spawnError.message}`,
      "Check that the session's working directory still exists.",
    );
  }
  const { text, omitted } = output.render();
  const meta = {
    sandboxed: launch.confined,
    exitCode: exit.code,
    signal: exit.signal,
    durationMs: Date.now() - started,
    outputChars: output.length,
    omittedChars: omitted,
  };
  if (stoppedBy === "abort") return { ...abortedResult(text), meta };
  if (stoppedBy === "timeout") {
    return toolError(
      "timeout",
      `The command timed out after ${timeoutMs / 1000} s and was killed with everything it started.` +
        (text ? `\n\nOutput so far:\n${text}` : " It printed nothing."),
      'Raise "timeout" (max 600 s), make the command finish sooner, or start it with "run_in_background": true ' +
        "and follow it with bash_output.",
      true,
      meta,
    );
  }
  const parts = [text.replace(/\n$/, "") || "(no output)"];
  if (exit.outputAbandoned) parts.push(ABANDONED_NOTE);
  parts.push(exitLine(exit.code, exit.signal));
  return { content: parts.join("\n\n"), meta };
}

/** How often, and how much in all, a running command's output is streamed to clients as `tool_output` events. */
const LIVE_OUTPUT_INTERVAL_MS = 200;
const LIVE_OUTPUT_MAX_CHARS = 64 * 1024;

/**
 * Streams a foreground command's output to clients while it runs (`tool_output {toolCallId, text}`), so a long
 * build or test run shows progress. Throttled and bounded; the tool result still carries the (capped) output.
 */
function liveOutput(ctx: ToolContext): { push(text: string): void; end(): void } {
  let pending = "";
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    if (!pending) return;
    ctx.emit({ type: "tool_output", text: pending });
    sent += pending.length;
    pending = "";
  };
  return {
    push(text) {
      const room = LIVE_OUTPUT_MAX_CHARS - sent - pending.length;
      if (room <= 0) return;
      pending += text.slice(0, room);
      timer ??= setTimeout(flush, LIVE_OUTPUT_INTERVAL_MS);
    },
    end() {
      clearTimeout(timer);
      flush();
    },
  };
}

function startBackground(
  tasks: BackgroundTasks,
  command: string,
  launch: Launch,
  timeout: number | undefined,
  ctx: ToolContext,
): ToolResult {
  const task = tasks.start(ctx.sessionId, command, ctx.cwd, launch);
  if (!task) {
    const running = tasks
      .list(ctx.sessionId)
      .filter((t) => t.status === "running")
      .map((t) => t.id);
    return toolError(
      "conflict",
      `Too many background tasks are running in this session (${running.join(", ")}).`,
      "Stop one with bash_kill (or wait for one to finish), then start the new one.",
    );
  }
  if (timeout !== undefined) task.limitLifetime(timeout * 1000, () => void tasks.kill(task));
  return {
    content:
      `Started background task ${task.id} (pid ${task.proc.pid ?? "unknown"}): ${command}\n` +
      `Read its output with bash_output {"task_id": "${task.id}"}; stop it with bash_kill {"task_id": "${task.id}"}.`,
    meta: { taskId: task.id, pid: task.proc.pid, sandboxed: launch.confined },
  };
}
