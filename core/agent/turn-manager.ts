import type { QuestionAnswer } from "../contributions.js";
import { ApiError, errorMessage } from "../errors.js";
import type { EndReason, SessionEvent } from "../events.js";
import type { SessionRecord, SessionStatus } from "../session-types.js";
import { createToken } from "../tokens.js";
import type { TurnController } from "../turns.js";
import { TurnBookkeeping } from "./bookkeeping.js";
import { EditorFsBroker } from "./editor-fs.js";
import { SessionInteractions } from "./interaction.js";
import { runLoop } from "./turn-loop.js";
import { type ActiveTurn, TurnQueue } from "./turn-queue.js";
import type { AgentDeps, QueuedMessage, UserContent } from "./types.js";

export interface ChatInput {
  text: string;
  images?: string[];
  clientMessageId?: string;
  /** Iteration budget for this turn (/goal). */
  budget?: number;
}

export type ChatOutcome = "started" | "steered" | "queued" | "duplicate";

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
export class TurnManager implements TurnController {
  private readonly queue: TurnQueue;
  private readonly books: TurnBookkeeping;
  private readonly interactions = new Map<string, SessionInteractions>();
  /** Editors attached to sessions, through which the file tools read and write. */
  readonly editors: EditorFsBroker;

  constructor(private readonly deps: AgentDeps) {
    this.queue = new TurnQueue((sessionId, id) => deps.store.hasClientMessageId(sessionId, id));
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

  pending(sessionId: string): Record<string, unknown> {
    const out = this.interactions.get(sessionId)?.pending() ?? {};
    const rec = this.deps.store.getSession(sessionId);
    if (rec?.meta.planTransition) out.planTransition = rec.meta.planTransition;
    return out;
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

  /** A chat message: starts a turn when idle, is steered into the running turn otherwise. */
  chat(rec: SessionRecord, input: ChatInput): ChatOutcome {
    if (input.clientMessageId && !this.queue.claimClientId(rec.id, input.clientMessageId)) return "duplicate";
    const msg: QueuedMessage = {
      content: userContent(input.text, input.images),
      clientMessageId: input.clientMessageId,
    };
    const t = this.queue.get(rec.id);
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
    if (clientMessageId && !this.queue.claimClientId(rec.id, clientMessageId)) return "duplicate";
    const msg: QueuedMessage = { content: text, clientMessageId };
    const t = this.queue.get(rec.id);
    if (t) {
      t.followups.push(msg);
      return "queued";
    }
    this.start(rec, msg, undefined);
    return "started";
  }

  clearFollowups(sessionId: string): number {
    return this.queue.clearFollowups(sessionId);
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
      i = new SessionInteractions(
        (e) => this.deps.publish(sessionId, e),
        () => this.deps.settings.confirmTimeoutMs(),
      );
      this.interactions.set(sessionId, i);
    }
    return i;
  }

  private start(rec: SessionRecord, first: QueuedMessage, budget: number | undefined): void {
    const t = this.queue.begin(rec.id, Date.now(), budget);
    const emit = (e: SessionEvent) => this.deps.publish(rec.id, e);
    this.books.started(rec, t, emit);
    t.done = this.run(t, first, emit);
    // The synchronous part of run() has stored the user message and sent the model request on its way; now, still
    // before the caller acknowledges the message, what crash recovery needs is made durable (the recovery marker,
    // then the turn's first events): a crash after the 202 still ends the turn, exactly once, at the next start.
    this.deps.onRunningChange(this.running());
  }

  private async run(t: ActiveTurn, first: QueuedMessage, emit: (e: SessionEvent) => void): Promise<void> {
    let reason: EndReason = "error";
    try {
      const msg = this.books.persistUser(t.sessionId, first, undefined, true);
      const message = { role: "user", content: msg.content, clientMessageId: first.clientMessageId, seq: msg.seq };
      // Clients drop their "queued" row on followup_injected; the message itself is rendered from user_message.
      if (first.fromQueue) emit({ type: "followup_injected", messages: [message] });
      emit({ type: "user_message", message });
      reason = await runLoop(
        { deps: this.deps, books: this.books, interactions: (id) => this.interactionsOf(id), editors: this.editors },
        t,
        emit,
      );
    } catch (err) {
      reason = t.ac.signal.aborted ? "aborted" : "error";
      if (reason === "error") {
        this.deps.log.error({ err, sessionId: t.sessionId }, "turn failed");
        emit({ type: "error", message: errorMessage(err) });
      }
    } finally {
      t.finished = true;
      t.blocks.length = 0;
      this.books.ending(t, reason, emit);
      this.queue.end(t);
      this.deps.onRunningChange(this.running());
      const rec = this.books.ended(t, reason, emit);
      this.next(t, rec, reason, emit);
    }
  }

  /** Follow-ups that raced the end of the loop (or were queued behind steering) become the next turn. */
  private next(t: ActiveTurn, rec: SessionRecord | undefined, reason: EndReason, emit: (e: SessionEvent) => void) {
    const next = this.queue.leftovers(t);
    if (rec && next.length && reason === "stop") {
      const [head, ...rest] = next;
      this.start(rec, { ...(head as QueuedMessage), fromQueue: true }, undefined);
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

export const TurnManagerToken = createToken<TurnManager>("turn-manager");
