import type { SessionRecord, SessionWaiting } from "./session-types.js";
import type { SessionListEntry } from "./store.js";

/**
 * What each session waits for from its user (summaries' `waiting`), kept by the session layer. The turn engine says
 * when a confirmation or a question becomes pending or is resolved ({@link changed}); a pending plan transition is
 * seen in the records the session layer reads (it outlives a restart in the record). A listing, which reads no
 * `meta`, shows what is remembered here, so it reads memory only.
 */
export class WaitingDecisions {
  /** The engine's most urgent pending decision per session (only sessions with one). */
  private readonly decisions = new Map<string, SessionWaiting>();
  /** Sessions whose record had a pending plan transition when last seen. */
  private readonly plans = new Set<string>();
  /** Sessions in plan mode whose record was read (or is being read) since the daemon started. */
  private readonly planModeSeen = new Set<string>();
  /** Sessions whose summary is being read to be announced again. */
  private readonly announcing = new Set<string>();

  /**
   * @param read reads a session's record (the store answers later)
   * @param announce announces the session's summary again on both streams
   */
  constructor(
    private readonly read: (id: string) => Promise<SessionRecord | undefined>,
    private readonly announce: (rec: SessionRecord) => void,
  ) {}

  /**
   * The session's `waiting`. Given a full record, its pending plan transition decides `"plan"` (and is remembered);
   * given a listing entry of a session in plan mode that was not read since the start, the record is read once and
   * the summary announced again if its plan waits, so the list that showed it without `waiting` gets it at once.
   */
  of(rec: SessionListEntry | SessionRecord): SessionWaiting | undefined {
    let plan: boolean;
    if ("meta" in rec) plan = this.seePlan(rec);
    else {
      plan = this.plans.has(rec.id);
      if (rec.mode === "plan" && !this.planModeSeen.has(rec.id)) this.recallPlan(rec.id);
    }
    return this.decisions.get(rec.id) ?? (plan ? "plan" : undefined);
  }

  /**
   * The engine's pending decisions changed: the summary is announced again. The record is read first; changes
   * meanwhile ride on the same announce, whose `waiting` is computed when it is published.
   */
  changed(id: string, waiting: SessionWaiting | undefined): void {
    if (waiting) this.decisions.set(id, waiting);
    else this.decisions.delete(id);
    if (this.announcing.has(id)) return;
    this.announcing.add(id);
    this.read(id)
      .then((rec) => {
        this.announcing.delete(id);
        if (rec) this.announce(rec);
      })
      // A session that cannot be read now is announced with its next change.
      .catch(() => this.announcing.delete(id));
  }

  /** A deleted session: nothing of it is remembered. */
  forget(id: string): void {
    this.decisions.delete(id);
    this.plans.delete(id);
    this.planModeSeen.delete(id);
  }

  private seePlan(rec: SessionRecord): boolean {
    if (rec.mode === "plan") this.planModeSeen.add(rec.id);
    if (rec.meta.planTransition) this.plans.add(rec.id);
    else this.plans.delete(rec.id);
    return rec.meta.planTransition !== undefined;
  }

  private recallPlan(id: string): void {
    this.planModeSeen.add(id);
    this.read(id)
      .then((rec) => {
        if (rec && !this.plans.has(id) && this.seePlan(rec)) this.announce(rec);
      })
      // Read again when a listing shows it next.
      .catch(() => this.planModeSeen.delete(id));
  }
}
