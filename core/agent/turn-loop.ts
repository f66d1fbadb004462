import type { EndReason, SessionEvent } from "../events.js";
import type { SessionRecord } from "../session-types.js";
import type { TurnBookkeeping } from "./bookkeeping.js";
import { compactIfNeeded } from "./compaction.js";
import { estimateTokens, toProviderMessages } from "./context.js";
import type { EditorFsBroker } from "./editor-fs.js";
import type { SessionInteractions } from "./interaction.js";
import { streamModelCall } from "./model-call.js";
import { systemPrompt } from "./prompt.js";
import { offered, runTools } from "./tool-runner.js";
import type { ActiveTurn } from "./turn-queue.js";
import type { AgentDeps } from "./types.js";

/** Nudges before a turn may finish with open todos. */
const TODO_NUDGES = 3;

export interface LoopParts {
  deps: AgentDeps;
  books: TurnBookkeeping;
  interactions(sessionId: string): SessionInteractions;
  editors: EditorFsBroker;
}

/**
 * The model/tool loop of one turn: steering in, the iteration cap, the prompt (compacted when the context fills),
 * one streamed model call, its tool calls, and again, until the model stops (past the todo gate), the turn is
 * aborted, or something fails. Returns why the turn ended; the caller writes the `end`.
 */
export async function runLoop(parts: LoopParts, t: ActiveTurn, emit: (e: SessionEvent) => void): Promise<EndReason> {
  const { deps, books } = parts;
  const signal = t.ac.signal;
  let iterations = 0;
  let nudges = 0;
  let lastPromptTokens = 0;
  for (;;) {
    await books.drain(t, "steering", emit);
    if (signal.aborted) return "aborted";
    const rec = await deps.store.getSession(t.sessionId);
    if (!rec) return "aborted";
    const cap =
      t.budget ?? (typeof rec.meta.turnCap === "number" ? rec.meta.turnCap : deps.settings.maxTurnIterations());
    if (iterations >= cap) {
      emit({
        type: "notice",
        message: `Reached the iteration cap (${cap}) for this turn; stopping. Send a message to continue.`,
      });
      t.capped = true;
      return "stop";
    }
    iterations++;
    const provider = deps.provider(rec);
    if (!provider) {
      emit({ type: "error", message: "No model provider is configured (set provider.baseURL or OPENAI_BASE_URL)" });
      return "error";
    }
    const tools = deps.tools(rec).filter((tool) => offered(tool, rec));
    const build = async (r: SessionRecord) => {
      const messages = toProviderMessages(
        systemPrompt({
          rec: r,
          personaPrompt: deps.persona(r)?.prompt ?? "",
          instructions: deps.instructions(r),
          todos: r.meta.todos ?? [],
          summary: r.meta.compactionSummary,
        }),
        await deps.store.contextMessages(r.id),
      );
      if (cap - iterations < 3) {
        messages.push({
          role: "user",
          content: `[system] You are about to reach this turn's iteration cap (${iterations}/${cap}). Wrap up now: finish the current step and summarise what is done and what remains.`,
        });
      }
      return messages;
    };
    let messages = await build(rec);
    const window = deps.settings.contextWindow(rec.model);
    const estimate = Math.max(lastPromptTokens, estimateTokens(messages));
    if (estimate > window * 0.75) {
      const compacted = await compactIfNeeded({ deps, rec, provider, signal, emit, tokensBefore: estimate });
      if (compacted) {
        lastPromptTokens = 0;
        messages = await build((await deps.store.getSession(rec.id)) ?? rec);
      }
    }
    const out = await streamModelCall(
      provider,
      {
        model: rec.model,
        messages,
        tools: tools.length
          ? tools.map((tool) => ({
              type: "function" as const,
              function: { name: tool.name, description: tool.description, parameters: tool.parameters },
            }))
          : undefined,
        reasoningEffort: rec.meta.reasoningEffort,
      },
      signal,
      emit,
      t.blocks,
    );
    if (out.usage) lastPromptTokens = out.usage.promptTokens;
    await books.usage(rec, out, window, emit);
    // A call cut short keeps what was streamed, but never half-received tool calls.
    const complete = out.finish !== undefined && !out.aborted && !out.error;
    const toolCalls = complete ? out.toolCalls : [];
    await books.assistant(rec, provider, out, toolCalls, emit);
    t.blocks.length = 0;
    if (out.aborted) {
      emit({ type: "turn_end", toolResults: [] });
      return "aborted";
    }
    if (out.error) {
      emit({ type: "turn_end", toolResults: [] });
      emit({ type: "error", message: out.error.message });
      return "error";
    }
    if (out.finish === undefined) {
      emit({ type: "turn_end", toolResults: [] });
      emit({ type: "notice", message: "The provider closed the stream before the response was complete." });
      return "disconnected";
    }
    if (!toolCalls.length) {
      const fresh = (await deps.store.getSession(rec.id)) ?? rec;
      const open = (fresh.meta.todos ?? []).filter((x) => x.status === "pending" || x.status === "in_progress");
      if (fresh.mode === "build" && open.length && nudges < TODO_NUDGES) {
        nudges++;
        emit({ type: "turn_end", toolResults: [] });
        const text = `Your todo list still has ${open.length} open item(s): ${open.map((x) => `"${x.content}" (${x.status})`).join(", ")}. Continue working on them, or update their statuses with todo_write (completed or cancelled) before finishing.`;
        const stored = await books.persistUser(rec.id, { content: text }, { reminder: true });
        emit({ type: "todo_gate", nudge: nudges, maxNudges: TODO_NUDGES, openTodos: open, seq: stored.seq });
        continue;
      }
      if (open.length && fresh.mode === "build") {
        emit({
          type: "notice",
          message: `The turn ended with ${open.length} open todo(s) after ${TODO_NUDGES} reminders.`,
        });
      }
      emit({ type: "turn_end", toolResults: [] });
      // Steering that arrived during this call is injected before one more model call; follow-ups become the
      // next turn (see TurnManager.run()).
      if (t.steering.length) continue;
      return "stop";
    }
    const results = await runTools(deps, t, rec, toolCalls, parts.interactions(rec.id), parts.editors, emit);
    emit({ type: "turn_end", toolResults: results });
    if (signal.aborted) return "aborted";
    if (results.some((r) => r.result?.endsTurn) && !t.steering.length) return "stop";
  }
}
