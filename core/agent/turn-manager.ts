import type { Question, QuestionAnswer, ToolContext, ToolDefinition, ToolResult } from "../contributions.js";
import { ApiError, errorMessage } from "../errors.js";
import type { EndReason, SessionEvent } from "../events.js";
import type { SessionRecord, SessionStatus, StoredMessage } from "../session-types.js";
import { createToken } from "../tokens.js";
import { abortedResult } from "../tools.js";
import type { TurnController } from "../turns.js";
import { compactIfNeeded } from "./compaction.js";
import { estimateTokens, toProviderMessages } from "./context.js";
import { dispatchToolCalls, type PendingCall, resultForModel } from "./dispatch.js";
import { EditorFsBroker } from "./editor-fs.js";
import { SessionInteractions } from "./interaction.js";
import { streamModelCall } from "./model-call.js";
import { plansDirOf, systemPrompt } from "./prompt.js";
import { busToolHooks } from "./tool-hooks.js";
import type { AgentDeps, QueuedMessage, StreamBlock, TodoItem, UserContent } from "./types.js";

export interface ChatInput {
  text: string;
  images?: string[];
  clientMessageId?: string;
  /** Iteration budget for this turn (/goal). */
  budget?: number;
}

export type ChatOutcome = "started" | "steered" | "queued" | "duplicate";

interface ActiveTurn {
  sessionId: string;
  startedAt: number;
  ac: AbortController;
  steering: QueuedMessage[];
  followups: QueuedMessage[];
  blocks: StreamBlock[];
  budget: number | undefined;
  finished: boolean;
  /** The turn stopped at its iteration cap (end carries `limit: "iterations"`). */
  capped?: boolean;
  done: Promise<void>;
}

/** Whether a session is offered a tool: its mode allows it, and it is not another session's own tool. */
function offered(tool: ToolDefinition, rec: SessionRecord): boolean {
  return (!tool.modes || tool.modes.includes(rec.mode)) && (!tool.sessionId || tool.sessionId === rec.id);
}

/** Nudges before a turn may finish with open todos. */
const TODO_NUDGES = 3;
/** How long running tools get to settle after an abort before they are recorded as aborted. */
const ABORT_GRACE_MS = 2000;
/** clientMessageIds remembered per session in memory (the store is checked too). */
const CLIENT_ID_MEMORY = 500;
/** Sessions whose recent clientMessageIds (and idle interaction state) are kept in memory. */
const SESSION_MEMORY = 1000;

/**
 * Runs agent turns: one at a time per session, in the background, streaming events to the session log and
 * persisting every message as it is produced. Every accepted turn ends with exactly one `end` event.
 */
export class TurnManager implements TurnController {
  private readonly active = new Map<string, ActiveTurn>();
  private readonly interactions = new Map<string, SessionInteractions>();
  private readonly acceptedIds = new Map<string, string[]>();
  /** Editors attached to sessions, through which the file tools read and write. */
  readonly editors: EditorFsBroker;
  /** Called whenever the set of running sessions changes (crash-recovery marker). */
  onRunningChange: (ids: string[]) => void = () => {};

  constructor(private readonly deps: AgentDeps) {
    this.editors = new EditorFsBroker((id, e) => deps.publish(id, e));
  }

  /* ---------- TurnController ---------- */

  status(sessionId: string): SessionStatus {
    return this.active.has(sessionId) ? "running" : "idle";
  }

  running(): string[] {
    return [...this.active.keys()];
  }

  turnStartedAt(sessionId: string): number | null {
    return this.active.get(sessionId)?.startedAt ?? null;
  }

  streaming(sessionId: string): unknown[] | null {
    const t = this.active.get(sessionId);
    return t?.blocks.length ? t.blocks.map((b) => ({ ...b })) : null;
  }

  pending(sessionId: string): Record<string, unknown> {
    const out = this.interactions.get(sessionId)?.pending() ?? {};
    const rec = this.deps.store.getSession(sessionId);
    if (rec?.meta.planTransition) out.planTransition = rec.meta.planTransition;
    return out;
  }

  async abort(sessionId: string): Promise<void> {
    const t = this.active.get(sessionId);
    if (!t) return;
    t.steering.length = 0;
    t.followups.length = 0;
    t.ac.abort();
    await t.done;
  }

  async abortAll(): Promise<void> {
    await Promise.all([...this.active.keys()].map((id) => this.abort(id)));
  }

  /* ---------- turn control ---------- */

  /** A chat message: starts a turn when idle, is steered into the running turn otherwise. */
  chat(rec: SessionRecord, input: ChatInput): ChatOutcome {
    if (input.clientMessageId && !this.claimClientId(rec.id, input.clientMessageId)) return "duplicate";
    const msg: QueuedMessage = {
      content: userContent(input.text, input.images),
      clientMessageId: input.clientMessageId,
    };
    const t = this.active.get(rec.id);
    if (t) {
      t.steering.push(msg);
      return "steered";
    }
    this.start(rec, msg, input.budget);
    return "started";
  }

  steer(rec: SessionRecord, text: string, clientMessageId?: string): ChatOutcome {
    return this.chat(rec, { text, clientMessageId });
  }

  followup(rec: SessionRecord, text: string, clientMessageId?: string): ChatOutcome {
    if (clientMessageId && !this.claimClientId(rec.id, clientMessageId)) return "duplicate";
    const msg: QueuedMessage = { content: text, clientMessageId };
    const t = this.active.get(rec.id);
    if (t) {
      t.followups.push(msg);
      return "queued";
    }
    this.start(rec, msg, undefined);
    return "started";
  }

  clearFollowups(sessionId: string): number {
    const t = this.active.get(sessionId);
    if (!t) return 0;
    const n = t.followups.length;
    t.followups.length = 0;
    return n;
  }

  answerConfirmation(sessionId: string, id: string, allow: boolean): void {
    const i = this.interactions.get(sessionId);
    if (!i) throw ApiError.notFound(`No confirmation with id ${id} in this session`);
    i.answerConfirmation(id, allow);
  }

  answerQuestion(sessionId: string, values: QuestionAnswer[]): void {
    const i = this.interactions.get(sessionId);
    if (!i?.hasQuestion) throw ApiError.conflict("No question is awaiting an answer");
    i.answerQuestion(values);
  }

  /** Resolves when the session's running turn (if any) has ended. */
  async idle(sessionId: string): Promise<void> {
    await this.active.get(sessionId)?.done;
  }

  /* ---------- internals ---------- */

  private interactionsOf(sessionId: string): SessionInteractions {
    let i = this.interactions.get(sessionId);
    if (!i) {
      if (this.interactions.size >= SESSION_MEMORY) {
        // Interaction state of sessions without a running turn holds nothing pending: drop the oldest of those.
        for (const id of this.interactions.keys()) {
          if (!this.active.has(id)) {
            this.interactions.delete(id);
            break;
          }
        }
      }
      i = new SessionInteractions(
        (e) => this.deps.publish(sessionId, e),
        () => this.deps.settings.confirmTimeoutMs(),
      );
      this.interactions.set(sessionId, i);
    }
    return i;
  }

  private claimClientId(sessionId: string, id: string): boolean {
    const mem = this.acceptedIds.get(sessionId) ?? [];
    if (mem.includes(id) || this.deps.store.hasClientMessageId(sessionId, id)) return false;
    mem.push(id);
    if (mem.length > CLIENT_ID_MEMORY) mem.shift();
    // Most recently used last; the oldest sessions are forgotten (the store still knows every accepted id).
    this.acceptedIds.delete(sessionId);
    this.acceptedIds.set(sessionId, mem);
    if (this.acceptedIds.size > SESSION_MEMORY) this.acceptedIds.delete(this.acceptedIds.keys().next().value as string);
    return true;
  }

  private start(rec: SessionRecord, first: QueuedMessage, budget: number | undefined): void {
    const t: ActiveTurn = {
      sessionId: rec.id,
      startedAt: Date.now(),
      ac: new AbortController(),
      steering: [],
      followups: [],
      blocks: [],
      budget,
      finished: false,
      done: Promise.resolve(),
    };
    this.active.set(rec.id, t);
    const emit = (e: SessionEvent) => this.deps.publish(rec.id, e);
    emit({ type: "status", status: "running", startedAt: t.startedAt });
    this.deps.bus.emit("turn.start", { sessionId: rec.id, cwd: rec.cwd });
    this.deps.updateSession(rec.id, {});
    t.done = this.run(t, first, emit);
    // The synchronous part of run() has stored the user message and sent the model request on its way; now, still
    // before the caller acknowledges the message, what crash recovery needs is made durable (the recovery marker,
    // then the turn's first events): a crash after the 202 still ends the turn, exactly once, at the next start.
    this.onRunningChange(this.running());
  }

  private async run(t: ActiveTurn, first: QueuedMessage, emit: (e: SessionEvent) => void): Promise<void> {
    let reason: EndReason = "error";
    try {
      const msg = this.persistUser(t.sessionId, first);
      const message = { role: "user", content: msg.content, clientMessageId: first.clientMessageId, seq: msg.seq };
      // Clients drop their "queued" row on followup_injected; the message itself is rendered from user_message.
      if (first.fromQueue) emit({ type: "followup_injected", messages: [message] });
      emit({ type: "user_message", message });
      reason = await this.loop(t, emit);
    } catch (err) {
      reason = t.ac.signal.aborted ? "aborted" : "error";
      if (reason === "error") {
        this.deps.log.error({ err, sessionId: t.sessionId }, "turn failed");
        emit({ type: "error", message: errorMessage(err) });
      }
    } finally {
      t.finished = true;
      t.blocks.length = 0;
      const ended = this.deps.store.getSession(t.sessionId);
      if (ended) {
        const provider = this.deps.provider(ended)?.id;
        emit({ type: "turn_meta", model: ended.model, provider, totalMs: Date.now() - t.startedAt });
      }
      emit({ type: "end", reason, ...(t.capped && reason === "stop" ? { limit: "iterations" } : {}) });
      this.active.delete(t.sessionId);
      this.onRunningChange(this.running());
      emit({ type: "status", status: "idle" });
      const rec = this.deps.store.getSession(t.sessionId);
      if (rec) {
        emit({ type: "session_end", usage: rec.usage, messageCount: rec.messageCount });
        this.deps.updateSession(t.sessionId, {});
      }
      this.deps.bus.emit("turn.end", { sessionId: t.sessionId, reason });
      // Follow-ups that raced the end of the loop (or were queued behind steering) become the next turn.
      const next = [...t.steering, ...t.followups];
      if (rec && next.length && reason === "stop") {
        const [head, ...rest] = next;
        this.start(rec, { ...(head as QueuedMessage), fromQueue: true }, undefined);
        const nt = this.active.get(rec.id);
        nt?.followups.push(...rest);
      } else if (next.length && reason !== "aborted") {
        // After a failed turn queued messages are not sent on their own, but never dropped silently either.
        const texts = next.map((m) => (typeof m.content === "string" ? m.content : "[message with images]"));
        emit({
          type: "notice",
          message: `The turn ended (${reason}); ${next.length} queued message(s) were not sent. Send them again to continue.`,
          unsent: texts,
        });
      }
    }
  }

  private persistUser(sessionId: string, m: QueuedMessage, meta?: Record<string, unknown>): StoredMessage {
    const stored = this.deps.store.appendMessage(sessionId, {
      role: "user",
      content: m.content,
      clientMessageId: m.clientMessageId,
      meta,
    });
    const rec = this.deps.store.getSession(sessionId);
    if (rec && !rec.title && !meta?.reminder) {
      const text =
        typeof m.content === "string"
          ? m.content
          : m.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join(" ");
      const title = text.replace(/\s+/g, " ").trim();
      if (title) this.deps.updateSession(sessionId, { title: title.length > 60 ? `${title.slice(0, 60)}…` : title });
    }
    return stored;
  }

  private drain(t: ActiveTurn, queue: "steering" | "followups", emit: (e: SessionEvent) => void): boolean {
    const items = t[queue].splice(0);
    if (!items.length) return false;
    const messages = items.map((m) => {
      const stored = this.persistUser(t.sessionId, m);
      return { role: "user", content: stored.content, clientMessageId: m.clientMessageId, seq: stored.seq };
    });
    emit({ type: queue === "steering" ? "steering_injected" : "followup_injected", messages });
    return true;
  }

  private async loop(t: ActiveTurn, emit: (e: SessionEvent) => void): Promise<EndReason> {
    const { deps } = this;
    const signal = t.ac.signal;
    let iterations = 0;
    let nudges = 0;
    let lastPromptTokens = 0;
    for (;;) {
      this.drain(t, "steering", emit);
      if (signal.aborted) return "aborted";
      const rec = deps.store.getSession(t.sessionId);
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
      const build = (r: SessionRecord) => {
        const messages = toProviderMessages(
          systemPrompt({
            rec: r,
            personaPrompt: deps.persona(r)?.prompt ?? "",
            instructions: deps.instructions(r),
            todos: (r.meta.todos as TodoItem[] | undefined) ?? [],
            summary: r.meta.compactionSummary as string | undefined,
          }),
          deps.store.contextMessages(r.id),
        );
        if (cap - iterations < 3) {
          messages.push({
            role: "user",
            content: `[system] You are about to reach this turn's iteration cap (${iterations}/${cap}). Wrap up now: finish the current step and summarise what is done and what remains.`,
          });
        }
        return messages;
      };
      let messages = build(rec);
      const window = deps.settings.contextWindow(rec.model);
      const estimate = Math.max(lastPromptTokens, estimateTokens(messages));
      if (estimate > window * 0.75) {
        const compacted = await compactIfNeeded({ deps, rec, provider, signal, emit, tokensBefore: estimate });
        if (compacted) {
          lastPromptTokens = 0;
          messages = build(deps.store.getSession(rec.id) ?? rec);
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
          reasoningEffort: rec.meta.reasoningEffort as string | undefined,
        },
        signal,
        emit,
        t.blocks,
      );
      if (out.usage) {
        lastPromptTokens = out.usage.promptTokens;
        const u = { ...rec.usage };
        u.promptTokens += out.usage.promptTokens;
        u.completionTokens += out.usage.completionTokens;
        u.totalTokens += out.usage.totalTokens;
        u.cacheReadTokens += out.usage.cacheReadTokens ?? 0;
        u.uncachedTokens += out.usage.promptTokens - (out.usage.cacheReadTokens ?? 0);
        deps.store.updateSession(rec.id, { usage: u });
        emit({
          type: "usage",
          usage: out.usage,
          generationMs: Math.round(out.generationMs),
          ttftMs: out.ttftMs === undefined ? undefined : Math.round(out.ttftMs),
          contextWindow: window,
        });
      }
      // A call cut short keeps what was streamed, but never half-received tool calls.
      const complete = out.finish !== undefined && !out.aborted && !out.error;
      const toolCalls = complete ? out.toolCalls : [];
      if (out.content || out.thinking || toolCalls.length) {
        const stored = deps.store.appendMessage(rec.id, {
          role: "assistant",
          content: out.content || (toolCalls.length ? null : ""),
          thinking: out.thinking || undefined,
          toolCalls: toolCalls.length ? toolCalls : undefined,
          meta: {
            turnMeta: {
              provider: provider.id,
              model: rec.model,
              generationMs: Math.round(out.generationMs),
              completedAt: new Date().toISOString(),
            },
          },
        });
        emit({
          type: "assistant_message",
          // The stored message's number; `seq` of every event is the event's own sequence number.
          messageSeq: stored.seq,
          content: out.content,
          thinking: out.thinking,
          toolCalls: toolCalls.length ? toolCalls : undefined,
        });
      }
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
        const fresh = deps.store.getSession(rec.id) ?? rec;
        const open = ((fresh.meta.todos as TodoItem[] | undefined) ?? []).filter(
          (x) => x.status === "pending" || x.status === "in_progress",
        );
        if (fresh.mode === "build" && open.length && nudges < TODO_NUDGES) {
          nudges++;
          emit({ type: "turn_end", toolResults: [] });
          const text = `Your todo list still has ${open.length} open item(s): ${open.map((x) => `"${x.content}" (${x.status})`).join(", ")}. Continue working on them, or update their statuses with todo_write (completed or cancelled) before finishing.`;
          const stored = this.persistUser(rec.id, { content: text }, { reminder: true });
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
        // next turn (see run()).
        if (t.steering.length) continue;
        return "stop";
      }
      const results = await this.runTools(t, rec, toolCalls, emit);
      emit({ type: "turn_end", toolResults: results });
      if (signal.aborted) return "aborted";
      if (results.some((r) => r.result?.endsTurn) && !t.steering.length) return "stop";
    }
  }

  private async runTools(
    t: ActiveTurn,
    rec: SessionRecord,
    calls: PendingCall[],
    emit: (e: SessionEvent) => void,
  ): Promise<Array<{ id: string; name: string; result: ToolResult }>> {
    const { deps } = this;
    const signal = t.ac.signal;
    const byName = new Map<string, ToolDefinition>();
    for (const tool of deps.tools(rec)) if (offered(tool, rec)) byName.set(tool.name, tool);
    const interactions = this.interactionsOf(rec.id);
    const permissionMode = rec.meta.permissionMode === "bypass" ? "bypass" : "default";
    const recorded = new Map<string, ToolResult>();
    const record = (call: PendingCall, result: ToolResult) => {
      if (recorded.has(call.id) || t.finished) return;
      recorded.set(call.id, result);
      const content: StoredMessage["content"] = result.images?.length
        ? [
            { type: "text", text: resultForModel(result) },
            ...result.images.map((i) => ({ type: "image_url" as const, image_url: { url: i.dataUrl } })),
          ]
        : resultForModel(result);
      deps.store.appendMessage(rec.id, {
        role: "tool",
        toolCallId: call.id,
        toolName: call.name,
        content,
        meta: {
          isError: result.isError === true,
          error: result.error,
          ...(result.meta ? { toolMeta: result.meta } : {}),
        },
      });
      const wire: Record<string, unknown> = { content: result.content };
      if (result.isError) wire.isError = true;
      if (result.error) wire.error = result.error;
      if (result.images?.length) wire.imageCount = result.images.length;
      emit({ type: "tool_end", id: call.id, name: call.name, status: result.isError ? "error" : "ok", result: wire });
    };
    const context = (call: PendingCall): ToolContext => ({
      sessionId: rec.id,
      cwd: rec.cwd,
      toolCallId: call.id,
      mode: rec.mode,
      plansDir: plansDirOf(rec),
      permissionMode,
      signal,
      emit: (e) => emit({ ...e, toolCallId: call.id }),
      confirm: (req) => (permissionMode === "bypass" ? Promise.resolve(true) : interactions.confirm(req, signal)),
      ask: (questions: Question[]) => interactions.ask(questions, signal),
      editor: this.editors.forTool(rec.id, signal),
    });
    const dispatched = dispatchToolCalls(calls, {
      lookup: (name) => byName.get(name),
      available: () => [...byName.keys()],
      context,
      signal,
      onStart: (call) =>
        emit({ type: "tool_start", id: call.id, name: call.name, args: call.arguments || "{}", status: "running" }),
      onEnd: record,
      ...busToolHooks(deps.bus, deps.log, { sessionId: rec.id, cwd: rec.cwd, signal }),
    });
    if (!signal.aborted) {
      let onAbort = () => {};
      const aborted = new Promise<void>((resolve) => (onAbort = resolve));
      signal.addEventListener("abort", onAbort, { once: true });
      await Promise.race([dispatched, aborted]);
      signal.removeEventListener("abort", onAbort);
    }
    if (signal.aborted) {
      // Tools get a grace period to stop; whatever is still running is recorded as aborted.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([dispatched, new Promise<void>((r) => (timer = setTimeout(r, ABORT_GRACE_MS)))]);
      clearTimeout(timer);
      for (const call of calls) {
        if (!recorded.has(call.id)) {
          record(call, abortedResult());
        }
      }
    }
    // Clients refresh file views after tools that may have changed files (cast's `fs_change`).
    if (calls.some((c) => byName.get(c.name)?.readOnly !== true)) emit({ type: "fs_change" });
    return calls.map((c) => ({ id: c.id, name: c.name, result: recorded.get(c.id) as ToolResult }));
  }
}

function userContent(text: string, images: string[] | undefined): UserContent {
  if (!images?.length) return text;
  return [{ type: "text", text }, ...images.map((url) => ({ type: "image_url" as const, image_url: { url } }))];
}

export const TurnManagerToken = createToken<TurnManager>("turn-manager");
