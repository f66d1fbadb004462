import type { Provider } from "../contributions.js";
import type { AppendedMessage, EndReason, SessionEvent } from "../events.js";
import type { SessionRecord, StoredMessage } from "../session-types.js";
import type { CallOutcome } from "./model-call.js";
import type { ActiveTurn } from "./turn-queue.js";
import type { AgentDeps, QueuedMessage } from "./types.js";

type Emit = (e: SessionEvent) => void;

/**
 * Turn bookkeeping: what a turn writes about itself besides tool results. The status and lifecycle events at its
 * start and end, user messages (with the session title taken from the first one), the assistant message of each
 * model call with its timing, and the session's token usage. Everything is persisted before it is announced.
 */
export class TurnBookkeeping {
  constructor(private readonly deps: AgentDeps) {}

  /**
   * A turn started: `status: running` on the session stream, `turn.started` on the bus. Its summary follows once the
   * turn's first message is stored (`persistUser`), which moves the session's updatedAt.
   */
  started(rec: SessionRecord, t: ActiveTurn, emit: Emit): void {
    emit({ type: "status", status: "running", startedAt: t.startedAt });
    this.deps.bus.emit({ type: "turn.started", sessionId: rec.id, cwd: rec.cwd, startedAt: t.startedAt });
  }

  /** The turn's last words while it still counts as running: its timing, then its one `end` event. */
  ending(t: ActiveTurn, rec: SessionRecord | undefined, reason: EndReason, emit: Emit): void {
    if (rec) {
      const provider = this.deps.provider(rec)?.id;
      emit({ type: "turn_meta", model: rec.model, provider, totalMs: Date.now() - t.startedAt });
    }
    emit({ type: "end", reason, ...(t.capped && reason === "stop" ? { limit: "iterations" } : {}) });
  }

  /** The session is idle again: `status: idle`, the session totals, the summary, `turn.ended` on the bus. */
  ended(t: ActiveTurn, rec: SessionRecord | undefined, reason: EndReason, emit: Emit): void {
    emit({ type: "status", status: "idle" });
    if (rec) {
      emit({ type: "session_end", usage: rec.usage, messageCount: rec.messageCount });
      this.statusChanged(t.sessionId, "idle");
    }
    this.deps.bus.emit({ type: "turn.ended", sessionId: t.sessionId, reason });
  }

  /**
   * A failed turn's error is kept with the session, so a reload or another client shows why the last message went
   * unanswered. Never throws: the turn ends either way.
   */
  async keepError(rec: SessionRecord, message: string | undefined): Promise<SessionRecord | undefined> {
    try {
      const lastTurnError = {
        message: message ?? "The turn failed.",
        afterSeq: await this.deps.sessions.lastMessageSeq(rec.id),
        at: new Date().toISOString(),
      };
      return await this.deps.sessions.setMeta(rec.id, { lastTurnError });
    } catch (err) {
      this.deps.log.error({ err, sessionId: rec.id }, "could not keep the turn's error");
      return undefined;
    }
  }

  /** A new turn started: the previous turn's error is no longer the last word. */
  async clearError(sessionId: string): Promise<void> {
    try {
      const rec = await this.deps.sessions.record(sessionId);
      if (!rec?.meta.lastTurnError) return;
      await this.deps.sessions.setMeta(sessionId, { lastTurnError: undefined }, { keepUpdatedAt: true });
    } catch (err) {
      this.deps.log.error({ err, sessionId }, "could not clear the previous turn's error");
    }
  }

  /** The summary with the new status, announced once the session's updatedAt is stored (in call order). */
  private statusChanged(sessionId: string, status: "running" | "idle"): void {
    this.deps.sessions.statusChanged(sessionId, status).catch((err) => {
      this.deps.log.error({ err, sessionId }, "could not record the session's status");
    });
  }

  /**
   * Stores a user message; the first one (not a reminder) of an untitled session names it. `opensTurn`: the message
   * a turn starts with (announced so on the bus, e.g. for file checkpoints); the session's summary, now running, is
   * announced with it (the stored message moved its updatedAt: no write of its own).
   */
  async persistUser(
    sessionId: string,
    m: QueuedMessage,
    meta?: Record<string, unknown>,
    opensTurn = false,
  ): Promise<StoredMessage> {
    const { sessions } = this.deps;
    const stored = await sessions.appendMessage(sessionId, {
      role: "user",
      content: m.content,
      clientMessageId: m.clientMessageId,
      meta,
    });
    const rec = await sessions.record(sessionId);
    const title = rec && !rec.title && !meta?.reminder ? titleOf(m.content) : "";
    // Setting the title announces the summary; otherwise the turn's first message does, as stored (the message
    // moved its updatedAt).
    if (title) await sessions.update(sessionId, { title });
    else if (rec && opensTurn) {
      const fresh = await sessions.refresh(sessionId);
      if (fresh) sessions.announce(fresh);
    }
    const message: AppendedMessage = { role: "user", seq: stored.seq };
    if (m.clientMessageId) message.clientMessageId = m.clientMessageId;
    this.deps.bus.emit({ type: "message.appended", sessionId, message, opensTurn });
    return stored;
  }

  /** Stores and announces the messages waiting in one queue of the turn; false when it was empty. */
  async drain(t: ActiveTurn, queue: "steering" | "followups", emit: Emit): Promise<boolean> {
    const items = t[queue].splice(0);
    if (!items.length) return false;
    const messages = [];
    for (const m of items) {
      const stored = await this.persistUser(t.sessionId, m);
      messages.push({ role: "user", content: stored.content, clientMessageId: m.clientMessageId, seq: stored.seq });
    }
    emit({ type: queue === "steering" ? "steering_injected" : "followup_injected", messages });
    return true;
  }

  /** Adds a model call's tokens to the session's totals and announces the call's usage. */
  async usage(rec: SessionRecord, out: CallOutcome, contextWindow: number, emit: Emit): Promise<void> {
    if (!out.usage) return;
    const { promptTokens, completionTokens, totalTokens, cacheReadTokens = 0 } = out.usage;
    await this.deps.sessions.addUsage(rec.id, {
      promptTokens,
      completionTokens,
      totalTokens,
      cacheReadTokens,
      uncachedTokens: promptTokens - cacheReadTokens,
    });
    emit({
      type: "usage",
      usage: out.usage,
      generationMs: Math.round(out.generationMs),
      ttftMs: out.ttftMs === undefined ? undefined : Math.round(out.ttftMs),
      contextWindow,
    });
  }

  /** Stores what a model call produced (text, thinking, complete tool calls) and announces it. */
  async assistant(
    rec: SessionRecord,
    provider: Provider,
    out: CallOutcome,
    toolCalls: CallOutcome["toolCalls"],
    emit: Emit,
  ): Promise<void> {
    if (!out.content && !out.thinking && !toolCalls.length) return;
    const stored = await this.deps.sessions.appendMessage(rec.id, {
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
      generationMs: Math.round(out.generationMs),
    });
    const message: AppendedMessage = { role: "assistant", seq: stored.seq };
    if (toolCalls.length) message.toolCalls = toolCalls;
    this.deps.bus.emit({ type: "message.appended", sessionId: rec.id, message, opensTurn: false });
  }
}

/** A session's title from its first message: the text, whitespace collapsed, at most 60 characters. */
function titleOf(content: QueuedMessage["content"]): string {
  const text =
    typeof content === "string" ? content : content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join(" ");
  const title = text.replace(/\s+/g, " ").trim();
  return title.length > 60 ? `${title.slice(0, 60)}…` : title;
}
