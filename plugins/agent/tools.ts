import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type DispatchHooks,
  defineTool,
  dispatchToolCalls,
  type Provider,
  type Question,
  type SessionEvent,
  type SessionMeta,
  type SessionRecord,
  T,
  type TodoItem,
  type ToolDefinition,
  toolError,
} from "../../core/index.js";

const TodoSchema = T.Object({
  content: T.String({ minLength: 1, maxLength: 500 }),
  status: T.Union([T.Literal("pending"), T.Literal("in_progress"), T.Literal("completed"), T.Literal("cancelled")]),
  priority: T.Optional(T.Union([T.Literal("high"), T.Literal("medium"), T.Literal("low")])),
});

export interface AgentToolDeps {
  session(id: string): Promise<SessionRecord | undefined>;
  /** Persists a meta change (merged) and returns the record. */
  setMeta(id: string, patch: Partial<SessionMeta>): Promise<void>;
  publish(id: string, event: SessionEvent): void;
  provider(rec: SessionRecord): Provider | undefined;
  tools(rec?: SessionRecord): ToolDefinition[];
  addSubagentUsage(id: string, tokens: number): Promise<void>;
  /** The before/after tool hooks (project hooks, policies) that apply to the sub-agent's calls too. */
  toolHooks(sessionId: string, cwd: string, signal: AbortSignal): Partial<DispatchHooks>;
}

export function todoWriteTool(deps: AgentToolDeps): ToolDefinition {
  return defineTool({
    name: "todo_write",
    description:
      "Replace the session's todo list. Use it for multi-step work: one item in_progress at a time; mark items completed as soon as they are done. In build mode the turn cannot finish while items are pending or in_progress.",
    parameters: T.Object({ todos: T.Array(TodoSchema, { maxItems: 100 }) }),
    modes: ["build"],
    async execute(args, ctx) {
      const todos: TodoItem[] = args.todos;
      if (todos.filter((t) => t.status === "in_progress").length > 1) {
        return toolError(
          "invalid_arguments",
          "At most one todo may be in_progress.",
          "Keep one item in_progress and mark the others pending.",
          true,
        );
      }
      await deps.setMeta(ctx.sessionId, { todos });
      deps.publish(ctx.sessionId, { type: "todos_updated", todos });
      const remaining = todos.filter((t) => t.status === "pending" || t.status === "in_progress").length;
      return { content: JSON.stringify({ todos, remaining }) };
    },
  });
}

export const questionTool: ToolDefinition = defineTool({
  name: "question",
  description:
    "Ask the user 1-5 multiple-choice questions (2-4 options each; multiSelect allows several answers) and wait for the answers. Use it when a decision is genuinely the user's to make.",
  parameters: T.Object({
    questions: T.Array(
      T.Object({
        question: T.String({ minLength: 1, maxLength: 1000 }),
        options: T.Array(
          T.Object({
            label: T.String({ minLength: 1, maxLength: 200 }),
            value: T.String({ minLength: 1, maxLength: 200 }),
            description: T.Optional(T.String({ maxLength: 500 })),
          }),
          { minItems: 2, maxItems: 4 },
        ),
        multiSelect: T.Optional(T.Boolean()),
      }),
      { minItems: 1, maxItems: 5 },
    ),
  }),
  async execute(args, ctx) {
    const questions: Question[] = args.questions;
    for (const [i, q] of questions.entries()) {
      if (new Set(q.options.map((o) => o.value)).size !== q.options.length) {
        return toolError(
          "invalid_arguments",
          `Question ${i + 1} has duplicate option values.`,
          "Give every option a distinct value.",
          true,
        );
      }
    }
    let answers: Array<string | string[]>;
    try {
      answers = await ctx.ask(questions);
    } catch {
      return toolError(
        "aborted",
        "The question was not answered (the turn was stopped).",
        "Wait for new instructions.",
      );
    }
    const lines = questions.map((q, i) => {
      const a = answers[i] ?? "";
      const label = (v: string) => q.options.find((o) => o.value === v)?.label ?? v;
      return `Question: ${q.question}\nAnswer: ${Array.isArray(a) ? a.map(label).join(", ") : label(a)}`;
    });
    return { content: lines.join("\n\n"), meta: { answers } };
  },
});

function planFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith(".md"))
      .map((f) => join(dir, f));
  } catch {
    return [];
  }
}

/** Open steps of a plan: unchecked checklist items. */
export function openPlanSteps(planDir: string): string[] {
  const steps: string[] = [];
  for (const file of planFiles(planDir)) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const m = /^\s*[-*] \[ \] (.+)$/.exec(line);
      if (m?.[1]) steps.push(m[1].trim());
    }
  }
  return steps;
}

export function planDoneTool(deps: AgentToolDeps): ToolDefinition {
  return defineTool({
    name: "plan_done",
    description:
      "Plan mode only: submit the finished plan (a Markdown file in the plans directory) for the user's approval, then stop.",
    parameters: T.Object({ summary: T.Optional(T.String({ maxLength: 2000 })) }),
    modes: ["plan"],
    async execute(args, ctx) {
      const files = planFiles(ctx.plansDir);
      if (!files.length) {
        return toolError(
          "not_found",
          `No plan file in ${ctx.plansDir}.`,
          "Write the plan as a Markdown file in the plans directory first.",
          true,
        );
      }
      const planTransition = { kind: "done", path: files[0], summary: args.summary ?? "" };
      await deps.setMeta(ctx.sessionId, { planTransition });
      deps.publish(ctx.sessionId, { type: "decision_state", planTransition });
      return {
        content: JSON.stringify({
          planReady: true,
          path: files[0],
          note: "The plan awaits the user's approval. Stop here.",
        }),
        endsTurn: true,
      };
    },
  });
}

const SUBAGENT_PROMPT = `You are a sub-agent of a coding agent. Do the task you are given with the read-only tools available, then answer with a concise, complete report: findings, file paths with line numbers, and anything uncertain. You cannot modify files.`;
const SUBAGENT_MAX_CALLS = 25;

/** `task`: a child agent loop with its own prompt and the read-only toolset; its answer is the tool result. */
export function taskTool(deps: AgentToolDeps): ToolDefinition {
  return defineTool({
    name: "task",
    description:
      "Delegate a self-contained investigation to a sub-agent with read-only tools (read, grep, glob, ls, web). Give it a complete prompt; it returns a report.",
    parameters: T.Object({
      description: T.String({ minLength: 1, maxLength: 200, description: "Short label (3-8 words)" }),
      prompt: T.String({ minLength: 1, maxLength: 50_000 }),
    }),
    async execute(args, ctx) {
      const rec = await deps.session(ctx.sessionId);
      const provider = rec && deps.provider(rec);
      if (!rec || !provider)
        return toolError("unavailable", "No model provider is configured for the sub-agent.", "Configure a provider.");
      const tools = deps
        .tools(rec)
        .filter((t) => t.readOnly && t.name !== "task" && (!t.sessionId || t.sessionId === ctx.sessionId));
      const byName = new Map(tools.map((t) => [t.name, t]));
      const messages: Parameters<Provider["stream"]>[0]["messages"] = [
        { role: "system", content: SUBAGENT_PROMPT },
        { role: "user", content: args.prompt },
      ];
      let tokens = 0;
      try {
        for (let call = 1; call <= SUBAGENT_MAX_CALLS; call++) {
          let content = "";
          const calls = new Map<number, { id: string; name: string; arguments: string }>();
          for await (const d of provider.stream(
            {
              model: rec.model,
              messages,
              tools: tools.map((t) => ({
                type: "function" as const,
                function: { name: t.name, description: t.description, parameters: t.parameters },
              })),
            },
            ctx.signal,
          )) {
            if (d.type === "content") content += d.text;
            else if (d.type === "usage") tokens += d.usage.totalTokens;
            else if (d.type === "tool_call") {
              const c = calls.get(d.index) ?? { id: d.id ?? `sub_${call}_${d.index}`, name: "", arguments: "" };
              if (d.id) c.id = d.id;
              if (d.name) c.name += d.name;
              if (d.argumentsDelta) c.arguments += d.argumentsDelta;
              calls.set(d.index, c);
            }
          }
          const pending = [...calls.values()];
          messages.push({
            role: "assistant",
            content,
            tool_calls: pending.length
              ? pending.map((c) => ({
                  id: c.id,
                  type: "function" as const,
                  function: { name: c.name, arguments: c.arguments },
                }))
              : undefined,
          });
          ctx.emit({
            type: "subagent_progress",
            description: args.description,
            call,
            toolCalls: pending.map((c) => c.name),
          });
          if (!pending.length)
            return {
              content: content || "(the sub-agent returned no text)",
              meta: { subagentTokens: tokens, calls: call },
            };
          const results = await dispatchToolCalls(pending, {
            lookup: (n) => byName.get(n),
            available: () => [...byName.keys()],
            context: (c) => ({ ...ctx, toolCallId: c.id }),
            signal: ctx.signal,
            onStart: () => {},
            onEnd: () => {},
            ...deps.toolHooks(ctx.sessionId, ctx.cwd, ctx.signal),
          });
          results.forEach((r, i) => {
            messages.push({ role: "tool", tool_call_id: (pending[i] as { id: string }).id, content: r.content });
          });
        }
        return toolError(
          "execution_failed",
          `The sub-agent did not finish within ${SUBAGENT_MAX_CALLS} model calls.`,
          "Give it a narrower task.",
          true,
        );
      } finally {
        if (tokens) await deps.addSubagentUsage(ctx.sessionId, tokens);
      }
    },
  });
}
