import type { QueuedMessage, StreamBlock } from "./types.js";

/** The running turn of one session: its abort signal, its queues and its live blocks. */
export interface ActiveTurn {
  sessionId: string;
  startedAt: number;
  ac: AbortController;
  /** Messages injected before the next model call of this turn. */
  steering: QueuedMessage[];
  /** Messages that become the next turn once this one stops. */
  followups: QueuedMessage[];
  /** Live, not yet persisted blocks of the running model call. */
  blocks: StreamBlock[];
  /** Iteration budget of this turn (/goal), or the session's cap. */
  budget: number | undefined;
  /** Set once the turn has ended: late tool results are no longer recorded. */
  finished: boolean;
  /** Its entry in the crash-recovery marker. */
  recoveryEntry: number;
  /** The turn stopped at its iteration cap (end carries `limit: "iterations"`). */
  capped?: boolean;
  /** The last error the turn reported (kept with the session when the turn ends in error). */
  error?: string;
  done: Promise<void>;
}

/** clientMessageIds remembered per session in memory (the store is checked too). */
const CLIENT_ID_MEMORY = 500;
/** Sessions whose recent clientMessageIds are kept in memory. */
const SESSION_MEMORY = 1000;

/**
 * Queueing and dedupe: which sessions have a running turn, the steering and follow-up queues of each, and the
 * clientMessageIds already accepted (so a retried POST is a duplicate, not a second message). Holds no I/O of its
 * own beyond asking the store whether an id was accepted before this process started.
 */
export class TurnQueue {
  private readonly active = new Map<string, ActiveTurn>();
  private readonly acceptedIds = new Map<string, string[]>();

  constructor(private readonly storedClientId: (sessionId: string, id: string) => boolean | Promise<boolean>) {}

  get(sessionId: string): ActiveTurn | undefined {
    return this.active.get(sessionId);
  }

  has(sessionId: string): boolean {
    return this.active.has(sessionId);
  }

  /** Ids of sessions with a running turn, in start order. */
  running(): string[] {
    return [...this.active.keys()];
  }

  /** Registers a new running turn for its session. */
  begin(sessionId: string, startedAt: number, budget: number | undefined): ActiveTurn {
    const t: ActiveTurn = {
      sessionId,
      startedAt,
      ac: new AbortController(),
      steering: [],
      followups: [],
      blocks: [],
      budget,
      finished: false,
      recoveryEntry: -1,
      done: Promise.resolve(),
    };
    this.active.set(sessionId, t);
    return t;
  }

  /** The turn is over: the session is idle again. */
  end(t: ActiveTurn): void {
    if (this.active.get(t.sessionId) === t) this.active.delete(t.sessionId);
  }

  /**
   * False when the id was accepted before (in memory or in the store); claims it otherwise. The claim is taken in
   * memory before the store is asked, so two requests racing with one id never both win.
   */
  async claimClientId(sessionId: string, id: string): Promise<boolean> {
    const mem = this.acceptedIds.get(sessionId) ?? [];
    if (mem.includes(id)) return false;
    mem.push(id);
    if (mem.length > CLIENT_ID_MEMORY) mem.shift();
    // Most recently used last; the oldest sessions are forgotten (the store still knows every accepted id).
    this.acceptedIds.delete(sessionId);
    this.acceptedIds.set(sessionId, mem);
    if (this.acceptedIds.size > SESSION_MEMORY) this.acceptedIds.delete(this.acceptedIds.keys().next().value as string);
    return !(await this.storedClientId(sessionId, id));
  }

  /** Empties both queues (abort). */
  clear(t: ActiveTurn): void {
    t.steering.length = 0;
    t.followups.length = 0;
  }

  /** Drops the queued follow-ups of the running turn; returns how many there were. */
  clearFollowups(sessionId: string): number {
    const t = this.active.get(sessionId);
    if (!t) return 0;
    const n = t.followups.length;
    t.followups.length = 0;
    return n;
  }

  /** What is left in the queues when a turn ends (steering that missed its model call first). */
  leftovers(t: ActiveTurn): QueuedMessage[] {
    return [...t.steering, ...t.followups];
  }
}
