import {
  definePlugin,
  PermissionRulesToken,
  type PluginContext,
  SandboxToken,
  ShellClassifierToken,
  type Static,
  T,
} from "../../core/index.js";
import { createBashKillTool } from "./bash-kill.js";
import { createBashOutputTool } from "./bash-output.js";
import { classifyCommand } from "./classifier.js";
import { BackgroundTasks } from "./tasks.js";
import { createBashTool, DEFAULT_SHELL_LIMITS, type ShellLimits } from "./tools.js";

export { createBashKillTool } from "./bash-kill.js";
export { createBashOutputTool } from "./bash-output.js";
export { type CommandClassification, classifyCommand } from "./classifier.js";
export { parseShell, ShellSyntaxError } from "./parser.js";
export { checkPlanModeCommand, PLAN_MODE_COMMANDS, type PlanModeVerdict } from "./plan-mode.js";
export { BackgroundTasks, type TaskLimits } from "./tasks.js";
export { createBashTool, DEFAULT_SHELL_LIMITS, type ShellLimits } from "./tools.js";

export const DEFAULT_TASK_LIMITS = { maxPerSession: 8, bufferChars: 1_000_000, keepFinished: 16 };

export const ShellOptionsSchema = T.Object({
  defaultTimeoutSeconds: T.Optional(
    T.Integer({ minimum: 1, maximum: 600, description: "bash timeout when the call gives none (default 120)" }),
  ),
  maxOutputChars: T.Optional(
    T.Integer({
      minimum: 1_000,
      maximum: 1_000_000,
      description: "Output returned per call; past it the start and the end are kept (default 30000)",
    }),
  ),
  maxBackgroundTasks: T.Optional(
    T.Integer({ minimum: 1, maximum: 64, description: "Background tasks running at once per session (default 8)" }),
  ),
  backgroundBufferChars: T.Optional(
    T.Integer({
      minimum: 10_000,
      maximum: 50_000_000,
      description: "Unread output kept per background task; older unread output is dropped (default 1000000)",
    }),
  ),
  killGraceMs: T.Optional(
    T.Integer({ minimum: 0, maximum: 30_000, description: "Wait between SIGTERM and SIGKILL (default 2000)" }),
  ),
});
export type ShellPluginOptions = Static<typeof ShellOptionsSchema>;

/** bash, bash_output and bash_kill: commands in the session's directory, gated by the dangerous-command check. */
export default definePlugin({
  manifest: {
    id: "tools-shell",
    version: "1.0.0",
    description: "bash (with a dangerous-command gate and a plan-mode allowlist), bash_output, bash_kill",
    capabilities: ["process"],
    provides: [ShellClassifierToken.id],
    configSchema: ShellOptionsSchema,
  },
  register(ctx) {
    ctx.services.provide(ShellClassifierToken, Object.freeze({ classify: classifyCommand }));
    const o = ctx.options;
    const limits: ShellLimits = {
      ...DEFAULT_SHELL_LIMITS,
      defaultTimeoutSeconds: o.defaultTimeoutSeconds ?? DEFAULT_SHELL_LIMITS.defaultTimeoutSeconds,
      maxOutputChars: o.maxOutputChars ?? DEFAULT_SHELL_LIMITS.maxOutputChars,
      killGraceMs: o.killGraceMs ?? DEFAULT_SHELL_LIMITS.killGraceMs,
    };
    const tasks = new BackgroundTasks({
      maxPerSession: o.maxBackgroundTasks ?? DEFAULT_TASK_LIMITS.maxPerSession,
      bufferChars: o.backgroundBufferChars ?? DEFAULT_TASK_LIMITS.bufferChars,
      keepFinished: DEFAULT_TASK_LIMITS.keepFinished,
      killGraceMs: limits.killGraceMs,
    });
    ctx.tools.add(
      createBashTool(limits, tasks, {
        sandbox: () => ctx.services.tryGet(SandboxToken),
        rules: () => ctx.services.tryGet(PermissionRulesToken),
      }),
    );
    ctx.tools.add(createBashOutputTool(limits, tasks));
    ctx.tools.add(createBashKillTool(limits, tasks));
    ctx.events.on("session.deleted", ({ sessionId }) => void tasks.killSession(sessionId));
    taskSets.set(ctx, tasks);
    ctx.onDispose(() => void tasks.killAll());
  },
  async stop(ctx) {
    await taskSets.get(ctx)?.killAll();
  },
});

/** The plugin object is shared by every daemon in the process; its state belongs to one registration. */
const taskSets = new WeakMap<PluginContext, BackgroundTasks>();
