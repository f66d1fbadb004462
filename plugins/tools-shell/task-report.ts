import { type ToolContext, type ToolResult, toolError } from "../../core/index.js";
import { capOutput } from "./output.js";
import type { BackgroundTask, BackgroundTasks } from "./tasks.js";

/** Lines longer than this are matched on their start only, which bounds the work of one filter call. */
const MAX_FILTERED_LINE = 4_000;

/** How a background task stands, in words. */
export function describeStatus(task: BackgroundTask): string {
  if (task.spawnError) return `failed to start (${task.spawnError.message})`;
  if (task.status === "running") return "running";
  if (task.status === "killed") return "killed";
  return task.signal ? `exited (killed by signal ${task.signal})` : `exited with code ${task.exitCode}`;
}

export function taskMeta(task: BackgroundTask): Record<string, unknown> {
  return { taskId: task.id, status: task.status, exitCode: task.exitCode, signal: task.signal };
}

export function unknownTask(tasks: BackgroundTasks, ctx: ToolContext, id: string): ToolResult {
  const known = tasks.list(ctx.sessionId).map((t) => t.id);
  return toolError(
    "not_found",
    `No background task "${id}" in this session${known.length ? ` (known: ${known.join(", ")})` : ""}.`,
    'Use the task id bash returned when started with "run_in_background": true.',
  );
}

/** New output since the last read, optionally filtered by line, capped like bash's output. */
export function readTask(task: BackgroundTask, filter: RegExp | undefined, maxChars: number): string {
  const { text, dropped } = task.read();
  let body = text;
  if (filter && body)
    body = body
      .split("\n")
      .filter((line) => filter.test(line.slice(0, MAX_FILTERED_LINE)))
      .join("\n");
  const capped = capOutput(body, maxChars).text;
  const parts: string[] = [];
  if (dropped) parts.push(`[${dropped} characters of older unread output were dropped]`);
  parts.push(capped || (filter ? "(no new output matching the filter)" : "(no new output)"));
  return parts.join("\n");
}
