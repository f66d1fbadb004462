import type { ChatMessage, Provider, ProviderRequest } from "../contributions.js";
import type { EndReason, SessionEvent } from "../events.js";
import type { SessionRecord } from "../session-types.js";
import type { TurnBookkeeping } from "./bookkeeping.js";
import { compactIfNeeded } from "./compaction.js";
import { estimateTokens, toProviderMessages } from "./context.js";
import type { EditorFsBroker } from "./editor-fs.js";
import type { SessionInteractions } from "./interaction.js";
import { type StartedCall, startModelCall, streamModelCall } from "./model-call.js";
import { systemPrompt } from "./prompt.js";
import { offered, runTools } from "./tool-runner.js";
import type { ActiveTurn } from "./turn-queue.js";
import type { AgentDeps, UserContent } from "./types.js";

/** Nudges before a turn may finish with open todos. */
const TODO_NUDGES = 3;

export interface LoopParts {
  deps: AgentDeps;
  books: TurnBookkeeping;
  interactions(sessionId: string): SessionInteractions;
  editors: EditorFsBroker;
}

/** A model call ready to go: the request and what the loop needs of it afterwards. */
export interface PreparedCall {
  rec: SessionRecord;
  provider: Provider;
  req: ProviderRequest;
  window: number;
}

/** A prepared call whose request has been sent. */
export interface SentCall {
  prepared: PreparedCall;
  started: StartedCall;
}

/** What the loop carries from one iteration to the next. */
export interface LoopState {
  iterations: number;
  lastPromptTokens: number;
}

/**
 * The next model call of a turn: the iteration cap, the provider, the tools offered and the prompt, compacted first
 * when the context fills. Returns why the turn ends instead when it cannot go on.
 *
 * `opening`: a user message that is not stored yet, put at the end of the stored context. Such a call is prepared
 * only when nothing is in the way: `later` (and nothing published) when the turn would end or the context needs
 * compacting; the loop then prepares it as any other once the message is stored.
 */
export function prepareCall(
  deps: AgentDeps,
  t: ActiveTurn,
  state: LoopState,
  emit: (e: SessionEvent) => void,
): Promise<PreparedCall | EndReason>;
export function prepareCall(
  deps: AgentDeps,
  t: ActiveTurn,
  state: LoopState,
  emit: (e: SessionEvent) => void,
  opening: UserContent,
): Promise<PreparedCall | EndReason | "later">;
export async function prepareCall(
  deps: AgentDeps,
  t: ActiveTurn,
  state: LoopState,
  emit: (e: SessionEvent) => void,
  opening?: UserContent,
): Promise<PreparedCall | EndReason | "later"> {
  const rec = await deps.sessions.record(t.sessionId);
  if (!rec) return opening === undefined ? "aborted" : "later";
  const cap = t.budget ?? (typeof rec.meta.turnCap === "number" ? rec.meta.turnCap : deps.settings.maxTurnIterations());
  const provider = deps.provider(rec);
  if (opening !== undefined && (state.iterations >= cap || !provider)) return "later";
  if (state.iterations >= cap) {
    emit({
      type: "notice",
      message: `Reached the iteration cap (${cap}) for this turn; stopping. Send a message to continue.`,
    });
    t.capped = true;
    return "stop";
  }
  if (!provider) {
    emit({
      type: "error",
      message:
        "No model provider is configured: connect one in the web UI's Settings, or set provider.baseURL (or OPENAI_BASE_URL)",
    });
    return "error";
  }
  const iteration = state.iterations + 1;
  let messages = await promptOf(deps, rec, iteration, cap, opening);
  const window = deps.settings.contextWindow(rec.model);
  const estimate = Math.max(state.lastPromptTokens, estimateTokens(messages));
  if (estimate > window * 0.75) {
    if (opening !== undefined) return "later";
    const signal = t.ac.signal;
    if (await compactIfNeeded({ deps, rec, provider, signal, emit, tokensBefore: estimate })) {
      state.lastPromptTokens = 0;
      messages = await promptOf(deps, (await deps.sessions.record(rec.id)) ?? rec, iteration, cap, undefined);
    }
  }
  state.iterations = iteration;
  const tools = deps.tools(rec).filter((tool) => offered(tool, rec));
  const req: ProviderRequest = {
    model: rec.model,
    messages,
    tools: tools.length
      ? tools.map((tool) => ({
          type: "function" as const,
          function: { name: tool.name, description: tool.description, parameters: tool.parameters },
        }))
      : undefined,
    reasoningEffort: rec.meta.reasoningEffort,
  };
  return { rec, provider, req, window };
}

/** The messages of one call: system prompt, the stored context (and `opening`), a wrap-up hint near the cap. */
async function promptOf(
  deps: AgentDeps,
  rec: SessionRecord,
  iteration: number,
  cap: number,
  opening: UserContent | undefined,
): Promise<ChatMessage[]> {
  const rows = await deps.sessions.context(rec.id);
  const messages = toProviderMessages(
    systemPrompt({
      rec,
      personaPrompt: deps.persona(rec)?.prompt ?? "",
      instructions: deps.instructions(rec),
      todos: rec.meta.todos ?? [],
      summary: rec.meta.compactionSummary,
    }),
    opening === undefined
      ? rows
      : [...rows, { seq: 0, role: "user", content: opening, inContext: true, createdAt: "" }],
  );
  if (cap - iteration < 3) {
    messages.push({
      role: "user",
      content: `[system] You are about to reach this turn's iteration cap (${iteration}/${cap}). Wrap up now: finish the current step and summarise what is done and what remains.`,
    });
  }
  return messages;
}

/**
 * The model/tool loop of one turn: steering in, the iteration cap, the prompt (compacted when the context fills),
 * one streamed model call, its tool calls, and again, until the model stops (past the todo gate), the turn is
 * aborted, or something fails. Returns why the turn ended; the caller writes the `end`.
 *
 * `first`: the turn's first call, already sent (see TurnManager: its request does not wait for the user message to
 * be stored). Steering that arrives meanwhile is not drained into it; the loop takes it in after that call.
 */
export async function runLoop(
  parts: LoopParts,
  t: ActiveTurn,
  emit: (e: SessionEvent) => void,
  first?: SentCall,
): Promise<EndReason> {
  const { deps, books } = parts;
  const signal = t.ac.signal;
  const state: LoopState = { iterations: first ? 1 : 0, lastPromptTokens: 0 };
  let nudges = 0;
  // Only the first iteration may find its call sent already.
  for (let sent = first; ; sent = undefined) {
    let call = sent;
    if (!call) {
      await books.drain(t, "steering", emit);
      if (signal.aborted) return "aborted";
      const prepared = await prepareCall(deps, t, state, emit);
      if (typeof prepared === "string") return prepared;
      call = { prepared, started: startModelCall(prepared.provider, prepared.req, signal) };
    }
    const { rec, provider, window } = call.prepared;
    const out = await streamModelCall(call.started, signal, emit, t.blocks);
    if (out.usage) state.lastPromptTokens = out.usage.promptTokens;
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
      const fresh = (await deps.sessions.record(rec.id)) ?? rec;
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
