import { defineTool, T, type ToolDefinition } from "../../core/index.js";
import { describeStatus, readTask, taskMeta, unknownTask } from "./task-report.js";
import type { BackgroundTasks } from "./tasks.js";
import type { ShellLimits } from "./tools.js";

/** `bash_kill`: stops a background task with every process it started. */
export function createBashKillTool(limits: ShellLimits, tasks: BackgroundTasks): ToolDefinition {
  return defineTool({
    name: "bash_kill",
    description: "Stops a background task started by bash, with every process it started (SIGTERM, then SIGKILL).",
    parameters: T.Object({
      task_id: T.String({ minLength: 1, description: 'The id bash returned, e.g. "bg-1".' }),
    }),
    execute: async (args, ctx) => {
      const id = args.task_id;
      const task = tasks.get(ctx.sessionId, id);
      if (!task) return unknownTask(tasks, ctx, id);
      if (task.status !== "running") {
        const body = readTask(task, undefined, limits.maxOutputChars);
        const state = task.status === "killed" ? "was already killed" : `had already ${describeStatus(task)}`;
        return { content: `Task ${task.id} ${state}; nothing to kill.\n${body}`, meta: taskMeta(task) };
      }
      await tasks.kill(task);
      const body = readTask(task, undefined, limits.maxOutputChars);
      return {
        content: `Task ${task.id} was killed with every process it started.\nLast output:\n${body}`,
        meta: taskMeta(task),
      };
    },
  });
}
