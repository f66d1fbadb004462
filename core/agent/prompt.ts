import type { SessionRecord } from "../session-types.js";
import type { TodoItem } from "./types.js";

const PLAN_MODE = `## Plan mode
You are in plan mode. Investigate and write a plan; do not change the project.
- read, grep, glob, ls and web tools work as usual; bash accepts read-only commands only.
- write and edit only work inside the plans directory: {plansDir}. Write the plan there as a Markdown file with a "## Steps" checklist ("- [ ] step").
- When the plan is ready, call plan_done with a short summary and stop.`;

export function plansDirOf(rec: SessionRecord): string {
  return `${rec.cwd}/.agentd/plans/${rec.id}`;
}

/** The system prompt of one model call: persona, environment, project instructions, mode, todos, summary. */
export function systemPrompt(opts: {
  rec: SessionRecord;
  personaPrompt: string;
  instructions: string;
  todos: TodoItem[];
  summary: string | undefined;
  now?: Date;
}): string {
  const { rec } = opts;
  const parts = [opts.personaPrompt.trim()];
  parts.push(
    `## Environment\n- Working directory: ${rec.cwd}\n- Date: ${(opts.now ?? new Date()).toISOString().slice(0, 10)}\n- Platform: ${process.platform}`,
  );
  if (opts.instructions.trim()) parts.push(opts.instructions.trim());
  if (rec.mode === "plan") parts.push(PLAN_MODE.replace("{plansDir}", plansDirOf(rec)));
  if (opts.todos.length) {
    parts.push(`## Current todos\n${opts.todos.map((t) => `- [${t.status}] ${t.content}`).join("\n")}`);
  }
  if (opts.summary) parts.push(`## Summary of the earlier conversation (compacted)\n${opts.summary}`);
  return parts.join("\n\n");
}
