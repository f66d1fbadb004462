import { defineTool, T, type ToolDefinition } from "../../core/index.js";
import { describeStatus, readTask, taskMeta, unknownTask } from "./task-report.js";
import type { BackgroundTasks } from "./tasks.js";
import { badArgument, type ShellLimits } from "./tools.js";

const MAX_WAIT_SECONDS = 60;
const MAX_FILTER_CHARS = 500;
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)\s*[+*{]/;

/** `bash_output`: the new output of a background task, optionally filtered, waiting for some when asked. */
export function createBashOutputTool(limits: ShellLimits, tasks: BackgroundTasks): ToolDefinition {
  return defineTool({
    name: "bash_output",
    description:
      "Returns the new output of a background task started by bash since the last call, and its status " +
      '(running, or exited with its code). "filter" keeps only lines matching a regular expression (the other ' +
      'new lines are discarded). "wait" waits up to that many seconds for new output or for the task to end.',
    readOnly: true,
    parameters: T.Object({
      task_id: T.String({ minLength: 1, description: 'The id bash returned, e.g. "bg-1".' }),
      filter: T.Optional(
        T.String({ description: "A JavaScript regular expression; only matching lines are returned." }),
      ),
      wait: T.Optional(
        T.Number({ minimum: 0, maximum: MAX_WAIT_SECONDS, description: "Seconds to wait for new output (default 0)." }),
      ),
    }),
    execute: async (args, ctx) => {
      const id = args.task_id;
      let filter: RegExp | undefined;
      if (args.filter) {
        if (args.filter.length > MAX_FILTER_CHARS)
          throw badArgument(`"filter" is longer than ${MAX_FILTER_CHARS} characters.`);
        // The filter runs on the daemon's event loop: refuse the classic catastrophic-backtracking shape.
        if (NESTED_QUANTIFIER.test(args.filter)) {
          throw badArgument('"filter" repeats a group that itself repeats (like (a+)+); simplify the expression.');
        }
        try {
          filter = new RegExp(args.filter);
        } catch (err) {
          throw badArgument(`"filter" is not a valid regular expression: ${(err as Error).message}`);
        }
      }
      const wait = args.wait ?? 0;
      const task = tasks.get(ctx.sessionId, id);
      if (!task) return unknownTask(tasks, ctx, id);
      await task.waitForChange(wait * 1000, ctx.signal);
      const body = readTask(task, filter, limits.maxOutputChars);
      return { content: `Task ${task.id}: ${describeStatus(task)}\n${body}`, meta: taskMeta(task) };
    },
  });
}
