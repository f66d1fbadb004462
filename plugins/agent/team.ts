import {
  ApiError,
  type ChatInput,
  type ChatOutcome,
  type Logger,
  type OrphanedTurn,
  type SessionRecord,
  type SessionStatus,
  type StoredEvent,
  type TurnCommand,
  type TurnCommandResult,
  type TurnManager,
  type TurnOwnership,
  type TurnService,
} from "../../core/index.js";
import {
  CONTROL_KINDS,
  type ControlActions,
  type ControlKind,
  type ControlPayloads,
  type ControlReply,
} from "./control.js";
import { pendingFromEvents } from "./remote-decisions.js";

/** The controls that may start a turn (the lease decides where). */
const STARTERS = new Set<ControlKind>(["chat", "steer", "followup"]);
/** Answers to a turn's decisions: after the turn, the daemon that ran it says they were resolved (409). */
const DECISIONS = new Set<ControlKind>(["confirm", "question"]);

export interface TeamDeps {
  /** The store's turn ownership; undefined on a store of one daemon (SQLite): everything runs here, unleased. */
  ownership(): TurnOwnership | undefined;
  actions: ControlActions;
  /** Resolves once everything published so far is stored. */
  durable(): Promise<void>;
  /** Ends a turn a gone daemon ran (unless its `end` is stored after `afterSeq`), as after a crash. */
  endOrphan(sessionId: string, afterSeq: number): Promise<void>;
  /** The session's latest stored events, deltas left out (a remote turn's decisions are read from them). */
  recentEvents(sessionId: string): Promise<StoredEvent[]>;
  log: Logger;
}

/**
 * The turn service of a daemon in a team: one owner per running turn. A control posted here runs here when this
 * daemon owns the session's turn (or none runs and this daemon takes the lease); otherwise it is forwarded to the
 * owner as a command, and answered with the owner's reply. Without a shared store it is the TurnManager itself,
 * plus one property read per call.
 */
export class TeamTurns implements TurnService {
  /** Per session: the lease decisions (claim and start, release, takeover), one at a time. */
  private readonly locks = new Map<string, Promise<unknown>>();
  /** Sessions whose lease is held until their local turns are over. */
  private readonly holding = new Set<string>();
  private served = false;

  constructor(
    private readonly manager: TurnManager,
    private readonly deps: TeamDeps,
  ) {}

  private team(): TurnOwnership | undefined {
    const own = this.deps.ownership();
    if (own && !this.served) {
      this.served = true;
      own.serve({
        lost: (id) => this.lost(id),
        orphaned: (t) => this.orphaned(own, t),
        command: (cmd) => this.execute(cmd),
      });
    }
    return own;
  }

  /** Starts serving the team (commands, takeovers) without waiting for a first request. */
  join(): void {
    this.team();
  }

  /* ---------- controls ---------- */

  /** A control posted to this daemon: carried out here, or by the turn's owner. */
  async control<K extends ControlKind>(
    sessionId: string,
    kind: K,
    payload: ControlPayloads[K],
    rec?: SessionRecord,
  ): Promise<ControlReply> {
    const own = this.team();
    if (!own) return this.deps.actions[kind](sessionId, payload, rec);
    return this.route(own, sessionId, kind, payload, false, rec);
  }

  private async route<K extends ControlKind>(
    own: TurnOwnership,
    sessionId: string,
    kind: K,
    payload: ControlPayloads[K],
    forwarded: boolean,
    rec?: SessionRecord,
    retried = false,
  ): Promise<ControlReply> {
    const here = () => this.deps.actions[kind](sessionId, payload, rec);
    if (this.manager.status(sessionId) === "running") return here();
    if (STARTERS.has(kind)) {
      type Decision = { reply: ControlReply } | { owner: string; expired: boolean };
      const decided = await this.locked(sessionId, async (): Promise<Decision> => {
        if (this.manager.status(sessionId) === "running") return { reply: await here() };
        const claim = await own.claim(sessionId);
        if (!claim.ok) return { owner: claim.owner, expired: claim.expired };
        try {
          return { reply: await here() };
        } finally {
          this.hold(own, sessionId);
        }
      });
      if ("reply" in decided) return decided.reply;
      if (decided.expired) {
        // Its owner is gone: the turn is taken over and ended now, and the message tried once more.
        await own.sweep();
        if (!retried) return this.route(own, sessionId, kind, payload, forwarded, rec, true);
        throw new ApiError(503, "The daemon that ran this session's turn is gone; its turn is being ended, try again", {
          code: "unavailable",
        });
      }
      if (forwarded) {
        throw ApiError.conflict("A turn of this session is running on another daemon", { code: "turn_running" });
      }
      return this.forward(own, decided.owner, sessionId, kind, payload);
    }
    const owner = forwarded ? undefined : await own.leaseOwner(sessionId, DECISIONS.has(kind));
    if (!owner || owner === own.daemonId) return here();
    return this.forward(own, owner, sessionId, kind, payload);
  }

  private async forward(
    own: TurnOwnership,
    owner: string,
    sessionId: string,
    kind: ControlKind,
    payload: unknown,
  ): Promise<ControlReply> {
    const cid = (payload as { clientMessageId?: string }).clientMessageId;
    const key = cid ? `${sessionId} ${kind} ${cid}` : undefined;
    const res = await own.send(owner, { sessionId, kind, payload }, key);
    if (res.status >= 400) {
      const { error, code, ...extra } = (res.body ?? {}) as { error?: string; code?: never } & Record<string, unknown>;
      throw new ApiError(res.status, error ?? "Refused by the daemon that runs the turn", { ...extra, code });
    }
    return res;
  }

  /** A command another daemon forwarded: carried out here, never forwarded again. */
  private async execute(cmd: TurnCommand): Promise<TurnCommandResult> {
    const own = this.deps.ownership();
    if (!own || !(CONTROL_KINDS as readonly string[]).includes(cmd.kind)) {
      throw ApiError.badRequest(`Unknown command ${cmd.kind}`);
    }
    const kind = cmd.kind as ControlKind;
    return this.route(own, cmd.sessionId, kind, cmd.payload as ControlPayloads[typeof kind], true);
  }

  /**
   * Keeps the lease while this daemon runs turns of the session (a turn's follow-ups start the next one at its
   * end), then lets it go once the last `end` is stored.
   */
  private hold(own: TurnOwnership, sessionId: string): void {
    if (this.holding.has(sessionId)) return;
    this.holding.add(sessionId);
    void (async () => {
      for (;;) {
        while (this.manager.status(sessionId) === "running") await this.manager.idle(sessionId);
        const released = await this.locked(sessionId, async () => {
          if (this.manager.status(sessionId) === "running") return false;
          this.holding.delete(sessionId);
          await this.deps.durable();
          await own.release(sessionId);
          return true;
        });
        if (released) return;
      }
    })().catch((err: unknown) => {
      this.holding.delete(sessionId);
      this.deps.log.error({ err, sessionId }, "could not release the turn's lease (it expires by itself)");
    });
  }

  /** This daemon lost the session's lease: its turn stops here (its writes are refused meanwhile). */
  private lost(sessionId: string): void {
    this.deps.log.warn({ sessionId }, "this daemon lost the lease of a running turn; stopping the turn");
    void this.manager.abort(sessionId);
  }

  /** A gone daemon's turn, leased to this daemon: ended once, for every client, then released. */
  private orphaned(own: TurnOwnership, t: OrphanedTurn): Promise<void> {
    return this.locked(t.sessionId, async () => {
      try {
        await this.deps.endOrphan(t.sessionId, t.afterSeq);
        await this.deps.durable();
      } finally {
        await own.release(t.sessionId);
      }
      this.deps.log.warn({ sessionId: t.sessionId, owner: t.owner }, "ended a turn whose daemon is gone");
    });
  }

  private locked<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    const before = this.locks.get(sessionId) ?? Promise.resolve();
    const result = before.then(fn, fn);
    const tail = result.catch(() => {});
    this.locks.set(sessionId, tail);
    void tail.then(() => {
      if (this.locks.get(sessionId) === tail) this.locks.delete(sessionId);
    });
    return result;
  }

  /* ---------- TurnService ---------- */

  private async outcome(sessionId: string, kind: ControlKind, payload: unknown): Promise<ChatOutcome> {
    const reply = await this.control(sessionId, kind, payload as never);
    return (reply.body as { status: ChatOutcome }).status;
  }

  chat(rec: SessionRecord, input: ChatInput): Promise<ChatOutcome> {
    return this.deps.ownership() ? this.outcome(rec.id, "chat", input) : this.manager.chat(rec, input);
  }

  steer(rec: SessionRecord, text: string, clientMessageId?: string): Promise<ChatOutcome> {
    if (!this.deps.ownership()) return this.manager.steer(rec, text, clientMessageId);
    return this.outcome(rec.id, "steer", { text, clientMessageId });
  }

  followup(rec: SessionRecord, text: string, clientMessageId?: string): Promise<ChatOutcome> {
    if (!this.deps.ownership()) return this.manager.followup(rec, text, clientMessageId);
    return this.outcome(rec.id, "followup", { text, clientMessageId });
  }

  clearFollowups(sessionId: string): number {
    return this.manager.clearFollowups(sessionId);
  }

  /* ---------- TurnController: a turn another daemon runs counts as running here ---------- */

  status(sessionId: string): SessionStatus {
    if (this.manager.status(sessionId) === "running") return "running";
    return this.deps.ownership()?.remote(sessionId) ? "running" : "idle";
  }

  running(): string[] {
    return this.manager.running();
  }

  turnStartedAt(sessionId: string): number | null {
    return this.manager.turnStartedAt(sessionId) ?? this.deps.ownership()?.remote(sessionId)?.startedAt ?? null;
  }

  streaming(sessionId: string): unknown[] | null {
    return this.manager.streaming(sessionId);
  }

  pending(rec: SessionRecord): Record<string, unknown> {
    return this.manager.pending(rec);
  }

  async remotePending(rec: SessionRecord): Promise<Record<string, unknown> | undefined> {
    if (this.manager.status(rec.id) === "running" || !this.deps.ownership()?.remote(rec.id)) return undefined;
    return { ...this.manager.pending(rec), ...pendingFromEvents(await this.deps.recentEvents(rec.id)) };
  }

  abort(sessionId: string): Promise<void> {
    return this.manager.abort(sessionId);
  }

  abortAll(): Promise<void> {
    return this.manager.abortAll();
  }
}
