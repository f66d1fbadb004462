import { randomBytes } from "node:crypto";
import type { ConfirmationRequest, Question, QuestionAnswer } from "../contributions.js";
import { ApiError } from "../errors.js";
import type { SessionEvent } from "../events.js";
import type { SessionWaiting } from "../session-types.js";

export interface PendingConfirmation extends ConfirmationRequest {
  id: string;
  requestedAt: string;
  expiresAt: string;
}

interface ConfirmationWaiter {
  info: PendingConfirmation;
  resolve: (allowed: boolean, by: "user" | "timeout" | "abort") => void;
}

interface QuestionWaiter {
  id: string;
  questions: Question[];
  resolve: (answers: QuestionAnswer[]) => void;
  reject: (err: Error) => void;
}

/** How long a resolved confirmation id is remembered, so a late answer gets 409 rather than 404. */
const RESOLVED_MEMORY = 200;

/**
 * Decisions a running turn waits for: dangerous-command confirmations and questions. One instance per session.
 * Pending items are what GET /sessions/{id} and the first SSE frame show.
 */
export class SessionInteractions {
  private readonly confirmations = new Map<string, ConfirmationWaiter>();
  private readonly resolved: string[] = [];
  private question: QuestionWaiter | undefined;

  /**
   * @param changed called after a decision became pending or was resolved (its event is already published), so the
   *   session's summary (`waiting`) can be announced again.
   */
  constructor(
    private readonly publish: (event: SessionEvent) => void,
    private readonly timeoutMs: () => number,
    private readonly changed: () => void = () => {},
  ) {}

  confirm(req: ConfirmationRequest, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    const id = `c_${randomBytes(9).toString("base64url")}`;
    const now = Date.now();
    const info: PendingConfirmation = {
      ...req,
      id,
      requestedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.timeoutMs()).toISOString(),
    };
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done(false, "timeout"), this.timeoutMs());
      const onAbort = () => done(false, "abort");
      const done = (allowed: boolean, by: "user" | "timeout" | "abort") => {
        if (!this.confirmations.delete(id)) return;
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.remember(id);
        this.publish({ type: "bash_confirm_resolved", id, allowed, by });
        this.changed();
        resolve(allowed);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.confirmations.set(id, { info, resolve: done });
      this.publish({ type: "bash_confirm", ...info });
      this.changed();
    });
  }

  /** A pending confirmation: 404 for an id never issued, 409 for one already resolved. */
  pendingConfirmation(id: string): PendingConfirmation {
    const w = this.confirmations.get(id);
    if (!w) {
      if (this.resolved.includes(id))
        throw ApiError.conflict(`Confirmation ${id} was already resolved (answered, timed out or aborted)`, {
          code: "confirmation_resolved",
        });
      throw ApiError.notFound(`No confirmation with id ${id} in this session`, "confirmation_not_found");
    }
    return w.info;
  }

  /** Answers a confirmation: 404 for an id never issued, 409 for one already resolved. */
  answerConfirmation(id: string, allow: boolean): void {
    this.pendingConfirmation(id);
    this.confirmations.get(id)?.resolve(allow, "user");
  }

  ask(questions: Question[], signal: AbortSignal): Promise<QuestionAnswer[]> {
    if (this.question) return Promise.reject(new Error("Another question is already waiting for an answer"));
    if (signal.aborted) return Promise.reject(new Error("aborted"));
    const id = `q_${randomBytes(9).toString("base64url")}`;
    return new Promise<QuestionAnswer[]>((resolve, reject) => {
      const onAbort = () => {
        this.clearQuestion();
        reject(new Error("aborted"));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.question = {
        id,
        questions,
        resolve: (a) => {
          signal.removeEventListener("abort", onAbort);
          resolve(a);
        },
        reject,
      };
      this.publish({ type: "decision_state", question: { id, questions } });
      this.changed();
    });
  }

  /** Checks the answers against the pending questions (400 with the reason) and resolves the waiting tool. */
  answerQuestion(values: QuestionAnswer[]): void {
    const q = this.question;
    if (!q) throw ApiError.conflict("No question is awaiting an answer", { code: "no_pending_question" });
    if (values.length !== q.questions.length) {
      throw ApiError.badRequest(`Expected ${q.questions.length} answer(s), one per question; got ${values.length}`);
    }
    q.questions.forEach((question, i) => {
      const v = values[i] as QuestionAnswer;
      if (Array.isArray(v)) {
        if (!question.multiSelect) throw ApiError.badRequest(`Question ${i + 1} takes a single answer, not a list`);
        if (v.length === 0) throw ApiError.badRequest(`Question ${i + 1}: choose at least one option`);
        const allowed = new Set(question.options.map((o) => o.value));
        const bad = v.find((x) => !allowed.has(x));
        if (bad !== undefined) throw ApiError.badRequest(`Question ${i + 1}: "${bad}" is not one of its options`);
      } else if (v.trim() === "") {
        throw ApiError.badRequest(`Question ${i + 1}: the answer is empty`);
      }
    });
    this.clearQuestion();
    q.resolve(values);
  }

  /** Pending decisions for GET /sessions/{id} and the first SSE frame. */
  pending(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (this.question) out.question = { id: this.question.id, questions: this.question.questions };
    if (this.confirmations.size) out.pendingConfirmations = [...this.confirmations.values()].map((w) => w.info);
    return out;
  }

  /** The most urgent pending decision, if any (a plan transition is not held here). */
  waiting(): SessionWaiting | undefined {
    if (this.confirmations.size) return "confirmation";
    return this.question ? "question" : undefined;
  }

  get hasQuestion(): boolean {
    return this.question !== undefined;
  }

  private clearQuestion(): void {
    if (!this.question) return;
    this.question = undefined;
    this.publish({ type: "decision_state" });
    this.changed();
  }

  private remember(id: string): void {
    this.resolved.push(id);
    if (this.resolved.length > RESOLVED_MEMORY) this.resolved.shift();
  }
}
