import {
  commandEnv,
  type Logger,
  type Sandbox,
  type SessionEvent,
  type ToolHookEvent,
  type ToolHookVerdict,
  type ToolResult,
  type WorktreeInfo,
} from "../../core/index.js";
import { type HookEvent, type HookOutcome, type HookSpec, matchesTool, runHook, stdoutDecision } from "./hooks.js";

const MAX_PAYLOAD_CONTENT = 100_000;
const MAX_NOTICE_OUTPUT = 300;

export interface HookRunnerDeps {
  hooks(cwd: string): HookSpec[];
  projectRoot(cwd: string): string;
  publish(sessionId: string, event: SessionEvent): void;
  log: Logger;
  /** Confines project hooks (absent: the sandbox plugin is not loaded, so project hooks do not run). */
  sandbox(): Sandbox | undefined;
}

function hookEnv(base: NodeJS.ProcessEnv, root: string, sessionId: string, event: HookEvent): NodeJS.ProcessEnv {
  // The daemon's secrets are not the hook's business (the sandbox's environment, scrubbed).
  return { ...base, AGENTD_PROJECT_DIR: root, AGENTD_SESSION_ID: sessionId, AGENTD_HOOK_EVENT: event };
}

/**
 * Project hooks come from the repository, so they run in the sandbox like the agent's commands (writable: the
 * project; network only where the policy is "allow"). Without a working sandbox they are not run: nobody is there to
 * ask. Global hooks, which the user configured, run as configured.
 */
function confineProjectHook(sandbox: Sandbox | undefined, root: string, env: NodeJS.ProcessEnv) {
  return (argv: string[]) => {
    const status = sandbox?.status();
    if (!sandbox || !status || (!status.enabled && status.kind !== "off")) {
      return `not run: project hooks run only in the sandbox, which is not available (${status?.reason ?? "no sandbox plugin"})`;
    }
    const network = sandbox.networkPolicy(root) === "allow";
    const w = sandbox.wrap({ argv, cwd: root, env, network, writable: [root] });
    return { file: w.file, args: w.args };
  };
}

function snippet(text: string): string {
  const t = text.trim();
  return t.length > MAX_NOTICE_OUTPUT ? `${t.slice(0, MAX_NOTICE_OUTPUT)}…` : t;
}

/**
 * Runs the PreToolUse / PostToolUse command hooks matching a tool call (Claude Code conventions): JSON on stdin,
 * exit 0 = fine (stdout may carry `{"decision":"block","reason"}`), exit 2 = block (before) or feedback (after)
 * with stderr as the reason; anything else is a non-blocking failure reported as a notice on the session.
 */
export class ToolHookRunner {
  constructor(private readonly deps: HookRunnerDeps) {}

  matching(event: HookEvent, e: ToolHookEvent): HookSpec[] {
    return this.deps.hooks(e.cwd).filter((h) => h.event === event && matchesTool(h.matcher, e.tool));
  }

  async run(
    event: HookEvent,
    hooks: HookSpec[],
    e: ToolHookEvent,
    result?: ToolResult,
  ): Promise<ToolHookVerdict | undefined> {
    const root = this.deps.projectRoot(e.cwd);
    const payload: Record<string, unknown> = {
      hook_event_name: event,
      session_id: e.sessionId,
      cwd: e.cwd,
      project_dir: root,
      tool_name: e.tool,
      tool_input: e.args,
      tool_call_id: e.toolCallId,
    };
    if (result) {
      payload.tool_response = {
        content: result.content.slice(0, MAX_PAYLOAD_CONTENT),
        is_error: result.isError === true,
        ...(result.error ? { error: result.error } : {}),
      };
    }
    const launch = await this.launcher(root, root, e.sessionId, event);
    const outcomes = await Promise.all(hooks.map((h) => runHook(h, payload, { ...launch(h), signal: e.signal })));
    const reasons: string[] = [];
    outcomes.forEach((o, i) => {
      const reason = this.interpret(event, hooks[i] as HookSpec, o, e);
      if (reason) reasons.push(reason);
    });
    if (!reasons.length) return undefined;
    return event === "PreToolUse" ? { block: reasons.join("\n") } : { feedback: reasons.join("\n") };
  }

  /**
   * Runs the `WorktreeCreate` hooks (global, and the project's once trusted) in a session's new worktree, with
   * `{hook_event_name, session_id, cwd, worktree}` on stdin. Failures are reported as notices; nothing is blocked.
   */
  async runWorktree(sessionId: string, wt: WorktreeInfo): Promise<void> {
    const hooks = this.deps.hooks(wt.path).filter((h) => h.event === "WorktreeCreate");
    if (!hooks.length) return;
    const root = this.deps.projectRoot(wt.path);
    const payload = { hook_event_name: "WorktreeCreate", session_id: sessionId, cwd: wt.path, worktree: wt };
    const launch = await this.launcher(root, wt.path, sessionId, "WorktreeCreate");
    const outcomes = await Promise.all(hooks.map((h) => runHook(h, payload, launch(h))));
    outcomes.forEach((o, i) => {
      if (o.code === 0) return;
      const hook = hooks[i] as HookSpec;
      const name = hook.command.join(" ");
      this.deps.log.warn({ sessionId, hook: name, code: o.code, timedOut: o.timedOut }, "worktree hook failed");
      this.deps.publish(sessionId, { type: "notice", message: `WorktreeCreate hook "${name}" ${this.why(hook, o)}.` });
    });
  }

  /** How each hook runs in `cwd`: the scrubbed environment, and project hooks confined to `cwd` in the sandbox. */
  private async launcher(root: string, cwd: string, sessionId: string, event: HookEvent) {
    const sandbox = this.deps.sandbox();
    await sandbox?.ready();
    const env = hookEnv(sandbox ? sandbox.env() : commandEnv(process.env), root, sessionId, event);
    const confined = confineProjectHook(sandbox, cwd, env);
    return (h: HookSpec) => ({ cwd, env, wrap: h.source === "project" ? confined : undefined });
  }

  private why(hook: HookSpec, o: HookOutcome): string {
    return o.timedOut
      ? `timed out after ${hook.timeoutMs / 1000} s`
      : o.error
        ? `could not run (${o.error})`
        : `exited with status ${o.code}${o.stderr.trim() ? `: ${snippet(o.stderr)}` : ""}`;
  }

  /** The block/feedback reason of one outcome, or undefined; failures are reported. */
  private interpret(event: HookEvent, hook: HookSpec, o: HookOutcome, e: ToolHookEvent): string | undefined {
    const name = hook.command.join(" ");
    if (o.code === 2) return o.stderr.trim() || `${event} hook "${name}" exited with status 2`;
    if (o.code === 0) {
      const d = stdoutDecision(o.stdout);
      return d.block ? d.reason || `${event} hook "${name}" decided to block` : undefined;
    }
    if (e.signal.aborted) return undefined;
    const why = this.why(hook, o);
    this.deps.log.warn(
      { sessionId: e.sessionId, event, hook: name, code: o.code, timedOut: o.timedOut },
      "hook failed",
    );
    const outcome = event === "PreToolUse" ? "; the tool call went ahead" : "";
    this.deps.publish(e.sessionId, { type: "notice", message: `${event} hook "${name}" ${why}${outcome}.` });
    return undefined;
  }
}
