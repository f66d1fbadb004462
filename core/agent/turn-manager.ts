import type { QuestionAnswer } from "../contributions.js";
import { ApiError, errorMessage } from "../errors.js";
import type { EndReason, SessionEvent } from "../events.js";
import type { SessionRecord, SessionStatus, StoredMessage } from "../session-types.js";
import type { ChatInput, ChatOutcome, TurnService } from "../turns.js";
import { TurnBookkeeping } from "./bookkeeping.js";
import { EditorFsBroker } from "./editor-fs.js";
import { type PendingConfirmation, SessionInteractions } from "./interaction.js";
import { startModelCall } from "./model-call.js";
import { prepareCall, runLoop, type SentCall } from "./turn-loop.js";
import { type ActiveTurn, TurnQueue } from "./turn-queue.js";
import type { AgentDeps, QueuedMessage, UserContent } from "./types.js";

/** Sessions whose idle interaction state is kept in memory. */
const SESSION_MEMORY = 1000;

/**
 * Runs agent turns: one at a time per session, in the background, streaming events to the session log and
 * persisting every message as it is produced. Every accepted turn ends with exactly one `end` event.
 *
 * This class only routes and sequences; the work is in its parts: {@link TurnQueue} (queueing and dedupe),
 * {@link runLoop} (the model/tool loop), `runTools` (tool execution and recording) and {@link TurnBookkeeping}
 * (status, lifecycle events, messages, title, usage). Everything it needs from the rest of the daemon arrives in
 * {@link AgentDeps} at construction; nothing is set on it afterwards.
 */
export class TurnManager implements TurnService {
  private readonly queue: TurnQueue;
  private readonly books: TurnBookkeeping;
  private readonly interactions = new Map<string, SessionInteractions>();
  /** Editors attached to sessions, through which the file tools read and write. */
  readonly editors: EditorFsBroker;

  constructor(private readonly deps: AgentDeps) {
    this.queue = new TurnQueue((sessionId, id) => deps.sessions.accepted(sessionId, id));
    this.books = new TurnBookkeeping(deps);
    this.editors = new EditorFsBroker((id, e) => deps.publish(id, e));
  }

  /* ---------- TurnController (read by the session layer) ---------- */

  status(sessionId: string): SessionStatus {
    return this.queue.has(sessionId) ? "running" : "idle";
  }

  running(): string[] {
    return this.queue.running();
  }

  turnStartedAt(sessionId: string): number | null {
    return this.queue.get(sessionId)?.startedAt ?? null;
  }

  streaming(sessionId: string): unknown[] | null {
    const t = this.queue.get(sessionId);
    return t?.blocks.length ? t.blocks.map((b) => ({ ...b })) : null;
  }

  pending(rec: SessionRecord): Record<string, unknown> {
    return this.interactions.get(rec.id)?.pending() ?? {};
  }

  async abort(sessionId: string): Promise<void> {
    const t = this.queue.get(sessionId);
    if (!t) return;
    this.queue.clear(t);
    t.ac.abort();
    await t.done;
  }

  async abortAll(): Promise<void> {
    await Promise.all(this.queue.running().map((id) => this.abort(id)));
  }

  /* ---------- turn control ---------- */

  /**
   * A chat message: starts a turn when idle, is steered into the running turn otherwise. Resolves once the message
   * is accepted: for a new turn, when its user message, its recovery marker and its first events are stored.
   */
  async chat(rec: SessionRecord, input: ChatInput): Promise<ChatOutcome> {
    if (input.clientMessageId && !(await this.queue.claimClientId(rec.id, input.clientMessageId))) return "duplicate";
    const msg: QueuedMessage = {
      content: userContent(input.text, input.images),
      clientMessageId: input.clientMessageId,
    };
    const t = this.queue.get(rec.id);
    if (t) {
      t.steering.push(msg);
      return "steered";
    }
    await this.start(rec, msg, input.budget);
    return "started";
  }

  steer(rec: SessionRecord, text: string, clientMessageId?: string): Promise<ChatOutcome> {
    return this.chat(rec, { text, clientMessageId });
  }

  async followup(rec: SessionRecord, text: string, clientMessageId?: string): Promise<ChatOutcome> {
    if (clientMessageId && !(await this.queue.claimClientId(rec.id, clientMessageId))) return "duplicate";
    const msg: QueuedMessage = { content: text, clientMessageId };
    const t = this.queue.get(rec.id);
    if (t) {
      t.followups.push(msg);
      return "queued";
    }
    await this.start(rec, msg, undefined);
    return "started";
  }

  clearFollowups(sessionId: string): number {
    return this.queue.clearFollowups(sessionId);
  }

  /** The pending confirmation `id` of a session (404 unknown, 409 already resolved). */
  pendingConfirmation(sessionId: string, id: string): PendingConfirmation {
    const i = this.interactions.get(sessionId);
    if (!i) throw ApiError.notFound(`No confirmation with id ${id} in this session`, "confirmation_not_found");
    return i.pendingConfirmation(id);
  }

  answerConfirmation(sessionId: string, id: string, allow: boolean): void {
    const i = this.interactions.get(sessionId);
    if (!i) throw ApiError.notFound(`No confirmation with id ${id} in this session`, "confirmation_not_found");
    i.answerConfirmation(id, allow);
  }

  answerQuestion(sessionId: string, values: QuestionAnswer[]): void {
    const i = this.interactions.get(sessionId);
    if (!i?.hasQuestion) throw ApiError.conflict("No question is awaiting an answer", { code: "no_pending_question" });
    i.answerQuestion(values);
  }

  /** Resolves when the session's running turn (if any) has ended. */
  async idle(sessionId: string): Promise<void> {
    await this.queue.get(sessionId)?.done;
  }

  /* ---------- internals ---------- */

  private interactionsOf(sessionId: string): SessionInteractions {
    let i = this.interactions.get(sessionId);
    if (!i) {
      if (this.interactions.size >= SESSION_MEMORY) {
        // Interaction state of sessions without a running turn holds nothing pending: drop the oldest of those.
        for (const id of this.interactions.keys()) {
          if (!this.queue.has(id)) {
            this.interactions.delete(id);
            break;
          }
        }
      }
      const created: SessionInteractions = new SessionInteractions(
        (e) => this.deps.publish(sessionId, e),
        () => this.deps.settings.confirmTimeoutMs(),
        () => this.deps.sessions.decisionsChanged(sessionId, created.waiting()),
      );
      i = created;
      this.interactions.set(sessionId, i);
    }
    return i;
  }

  /**
   * Starts a turn. Synchronously: the session counts as running, the recovery marker names the turn, and its start
   * is published. The promise resolves once the first user message and those events are stored (the 202's promise).
   */
  private start(rec: SessionRecord, first: QueuedMessage, budget: number | undefined): Promise<void> {
    const t = this.queue.begin(rec.id, Date.now(), budget);
    // The turn reads the record once: the session layer keeps it (and the context) until the turn has ended.
    this.deps.sessions.hold(rec.id, rec);
    t.recoveryEntry = this.deps.recovery.turnStarting(rec.id);
    const emit = (e: SessionEvent) => {
      if (e.type === "error") t.error = e.message;
      this.deps.publish(rec.id, e);
    };
    this.books.started(rec, t, emit);
    let accepted: () => void = () => {};
    const userStored = new Promise<void>((resolve) => (accepted = resolve));
    t.done = this.run(t, first, emit, accepted);
    return userStored.then(() => this.deps.sessions.durable());
  }

  private async run(
    t: ActiveTurn,
    first: QueuedMessage,
    emit: (e: SessionEvent) => void,
    accepted: () => void,
  ): Promise<void> {
    let reason: EndReason = "error";
    let sent: SentCall | undefined;
    let stored: Promise<StoredMessage> | undefined;
    const store = () => {
      stored ??= this.books.persistUser(t.sessionId, first, undefined, true);
      return stored;
    };
    try {
      sent = await this.sendFirst(t, first, emit, store);
      const msg = await store();
      accepted();
      const message = { role: "user", content: msg.content, clientMessageId: first.clientMessageId, seq: msg.seq };
      // Clients drop their "queued" row on followup_injected; the message itself is rendered from user_message.
      if (first.fromQueue) emit({ type: "followup_injected", messages: [message] });
      emit({ type: "user_message", message });
      await this.books.clearError(t.sessionId);
      const parts = {
        deps: this.deps,
        books: this.books,
        interactions: (id: string) => this.interactionsOf(id),
        editors: this.editors,
      };
      const loop = runLoop(parts, t, emit, sent);
      sent = undefined; // the loop reads (or closes) it from here on
      reason = await loop;
    } catch (err) {
      sent?.started.cancel();
      reason = t.ac.signal.aborted ? "aborted" : "error";
      if (reason === "error") {
        this.deps.log.error({ err, sessionId: t.sessionId }, "turn failed");
        emit({ type: "error", message: errorMessage(err) });
      }
    } finally {
      accepted();
      await this.finish(t, reason, emit);
    }
  }

  /**
   * The turn's first model call, sent while its user message is being stored: the prompt is the stored context plus
   * that message, and the store writes (and syncs) while the request is built and the provider works, so neither
   * waits for the other. Its deltas are read only after the message is stored and announced, so a turn's events
   * keep their order. Not sent (the loop prepares its first call as any other) when steering arrived meanwhile, or
   * when the call cannot go as it is (the context needs compacting, no provider, the iteration cap).
   */
  private async sendFirst(
    t: ActiveTurn,
    first: QueuedMessage,
    emit: (e: SessionEvent) => void,
    store: () => Promise<StoredMessage>,
  ) {
    const prepared = await prepareCall(this.deps, t, { iterations: 0, lastPromptTokens: 0 }, emit, first.content);
    if (typeof prepared === "string" || t.steering.length || t.ac.signal.aborted) return undefined;
    // The prompt is read: the message is written now, and its sync to disk (on the thread pool) or its round trip to
    // the database runs while the request is built and the provider works. Awaited (and its failures seen) by run().
    store().catch(() => undefined);
    return { prepared, started: startModelCall(prepared.provider, prepared.req, t.ac.signal) };
  }

  /**
   * The end of a turn, exactly once: its `end`, the session idle again and the next turn from its queues, in one
   * synchronous run (no other turn of the session can start in between; messages steered in while the session was
   * read are left over and become that next turn). The recovery marker lets go of the turn once the `end` is stored.
   */
  private async finish(t: ActiveTurn, reason: EndReason, emit: (e: SessionEvent) => void): Promise<void> {
    t.finished = true;
    t.blocks.length = 0;
    let rec: SessionRecord | undefined;
    try {
      // The totals the turn's `session_end` states, as stored.
      rec = await this.deps.sessions.refresh(t.sessionId);
    } catch (err) {
      this.deps.log.error({ err, sessionId: t.sessionId }, "could not read the session at the end of its turn");
    }
    if (reason === "error" && rec) rec = (await this.books.keepError(rec, t.error)) ?? rec;
    this.books.ending(t, rec, reason, emit);
    this.queue.end(t);
    this.books.ended(t, rec, reason, emit);
    void this.deps.recovery.turnEnded(t.recoveryEntry);
    this.next(t, rec, reason, emit);
    this.deps.sessions.release(t.sessionId);
  }

  /** Follow-ups that raced the end of the loop (or were queued behind steering) become the next turn. */
  private next(t: ActiveTurn, rec: SessionRecord | undefined, reason: EndReason, emit: (e: SessionEvent) => void) {
    const next = this.queue.leftovers(t);
    if (rec && next.length && reason === "stop") {
      const [head, ...rest] = next;
      void this.start(rec, { ...(head as QueuedMessage), fromQueue: true }, undefined);
      this.queue.get(rec.id)?.followups.push(...rest);
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

function userContent(text: string, images: string[] | undefined): UserContent {
  if (!images?.length) return text;
  return [{ type: "text", text }, ...images.map((url) => ({ type: "image_url" as const, image_url: { url } }))];
}
