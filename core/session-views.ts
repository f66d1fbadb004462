import { DisplayFolder, type MessageImageUrl, toDisplayMessages } from "./display.js";
import type { EventLog } from "./event-log-types.js";
import type { SessionEventOf } from "./events.js";
import type { SessionHistory, SessionView } from "./session-service.js";
import type {
  ProjectTrustPrompt,
  SessionRecord,
  SessionStatus,
  SessionSummary,
  StoredMessage,
} from "./session-types.js";
import type { WaitingDecisions } from "./session-waiting.js";
import type { ListQuery, SessionListEntry, SessionStore } from "./store.js";
import type { TurnController } from "./turns.js";
import type { SessionWorktrees } from "./worktrees.js";

/** A session read whole is read in pages from this many messages on (see `SessionViews.wholeView`)... */
const WHOLE_READ_FROM = 500;
/** ...of this many rows: the smaller the page, the less survives a collection of the young generation. */
const WHOLE_READ_PAGE = 100;
/** Where a whole-session view's messages go in its JSON: a string no field before them holds. */
const MESSAGES_HERE = "\u0000agentd:messages\u0000" as unknown as SessionView["messages"];
const MESSAGES_HERE_JSON = JSON.stringify(MESSAGES_HERE);
const COMMA = Buffer.from(",");
const OPEN = Buffer.from("[");
const CLOSE = Buffer.from("]");
/** Summaries per part of a listing's JSON (~70 KB: served from malloc's heap, no fresh mapping to fault in). */
const LIST_PART = 256;

/** A listing's JSON parts and what they were made of: the store's frozen entries and their statuses. */
interface ListingText {
  sessions: readonly SessionListEntry[];
  statuses: SessionStatus[];
  parts: Buffer[];
}

/** What the views read besides the store and the event log (the session layer's parts). */
export interface ViewParts {
  require(id: string): Promise<SessionRecord>;
  turns(): TurnController;
  waiting: WaitingDecisions;
  projectTrust(cwd: string): ProjectTrustPrompt | undefined;
  worktrees(): SessionWorktrees | undefined;
}

/**
 * What the session layer answers with: listings and summaries, GET /sessions/{id} and its history pages, and the
 * first frame of a session's stream. Reads only: the records, the turn engine's memory, the waiting decisions.
 */
export class SessionViews {
  /**
   * The JSON text of the summaries of frozen listing entries (the store shares those, and gives a session a new one
   * when it changes), with the status each was made for; only summaries that say nothing beyond their entry and
   * status are kept.
   */
  private readonly summaryText = new WeakMap<SessionListEntry, { status: SessionStatus; json: Buffer }>();
  /**
   * The last `listAllJson` answer with what it was made of (the store's frozen listing, every summary plain): given
   * again while the same listing comes with the same statuses, so a repeated listing allocates and copies nothing
   * (fresh parts of ~2.7 MiB per listing cost page faults as much as the copying itself).
   */
  private lastListing: ListingText | undefined;

  constructor(
    private readonly store: SessionStore,
    private readonly events: EventLog,
    private readonly parts: ViewParts,
  ) {}

  async list(query: ListQuery): Promise<{ sessions: SessionSummary[]; total: number }> {
    const { sessions, total } = await this.entries(query);
    const { trustOf, turns, worktrees } = this.listing();
    const summaries = sessions.map((s) => this.summary(s, trustOf, turns.status(s.id), worktrees));
    if (query.q?.trim()) await this.attachMatches(summaries, query.q);
    return { sessions: summaries, total };
  }

  /**
   * `list({})`'s sessions as UTF-8 JSON, in parts whose concatenation is the text. The text of an unchanged
   * session's summary is kept with its entry, and the whole answer while nothing in it changes: `agentd serve` lists
   * 10,000 sessions again in ~5 ms of CPU instead of ~60 (docs/benchmarks.md, issue 27).
   */
  async listAllJson(): Promise<Uint8Array[]> {
    const { sessions } = await this.entries({});
    const { trustOf, turns, worktrees } = this.listing();
    const last = this.lastListing;
    const statuses = sessions.map((e) => turns.status(e.id));
    const plain = sessions.map((e) => this.plain(e, trustOf, worktrees));
    const keep = Object.isFrozen(sessions) && plain.every(Boolean);
    if (keep && last?.sessions === sessions && statuses.every((s, i) => s === last.statuses[i])) return last.parts;
    const parts: Buffer[] = [];
    let part: Buffer[] = [OPEN];
    sessions.forEach((e, i) => {
      if (i > 0) part.push(COMMA);
      part.push(this.summaryJson(e, plain[i] === true, trustOf, statuses[i] as SessionStatus, worktrees));
      if (part.length >= 2 * LIST_PART) {
        parts.push(Buffer.concat(part));
        part = [];
      }
    });
    part.push(CLOSE);
    parts.push(Buffer.concat(part));
    this.lastListing = keep ? { sessions, statuses, parts } : undefined;
    return parts;
  }

  private entries(query: ListQuery) {
    return this.store.listEntries?.(query) ?? this.store.listSessions(query);
  }

  /** What a listing's summaries read besides their entries, looked up once per listing rather than per session. */
  private listing() {
    // Sessions share directories: ask for each directory's trust prompt once per listing.
    const prompts = new Map<string, ProjectTrustPrompt | undefined>();
    const trustOf = (cwd: string) => {
      if (!prompts.has(cwd)) prompts.set(cwd, this.parts.projectTrust(cwd));
      return prompts.get(cwd);
    };
    return { trustOf, turns: this.parts.turns(), worktrees: this.parts.worktrees() };
  }

  /** Whether the summary of a frozen entry says nothing beyond the entry and its status (no prompt, decision, worktree). */
  private plain(
    e: SessionListEntry | SessionRecord,
    trustOf: (cwd: string) => ProjectTrustPrompt | undefined,
    worktrees: SessionWorktrees | undefined,
  ): boolean {
    return Object.isFrozen(e) && !trustOf(e.cwd) && !this.parts.waiting.of(e) && !worktrees?.info(e.id);
  }

  /** `summary`'s JSON text, kept with a frozen entry while it is `plain` (says nothing beyond entry and status). */
  private summaryJson(
    e: SessionListEntry | SessionRecord,
    plain: boolean,
    trustOf: (cwd: string) => ProjectTrustPrompt | undefined,
    status: SessionStatus,
    worktrees: SessionWorktrees | undefined,
  ): Buffer {
    const kept = plain ? this.summaryText.get(e) : undefined;
    if (kept?.status === status) return kept.json;
    const json = Buffer.from(JSON.stringify(this.summary(e, trustOf, status, worktrees)));
    if (plain) this.summaryText.set(e, { status, json });
    return json;
  }

  /** Says why each listed session matched a search whose terms its title does not hold: its newest matching message. */
  private async attachMatches(summaries: SessionSummary[], q: string): Promise<void> {
    const terms = q.toLowerCase().split(/\s+/).filter(Boolean);
    await Promise.all(
      summaries.map(async (s) => {
        const title = (s.title ?? "").toLowerCase();
        if (terms.every((t) => title.includes(t))) return;
        const [hit] = await this.store.searchMessages(q, { sessionId: s.id, limit: 1 });
        if (hit) s.match = { seq: hit.seq, role: hit.role, snippet: hit.snippet };
      }),
    );
  }

  summary(
    rec: SessionListEntry | SessionRecord,
    trustOf: (cwd: string) => ProjectTrustPrompt | undefined = (cwd) => this.parts.projectTrust(cwd),
    status: SessionStatus = this.parts.turns().status(rec.id),
    worktrees: SessionWorktrees | undefined = this.parts.worktrees(),
  ): SessionSummary {
    const s: SessionSummary = {
      id: rec.id,
      persona: rec.persona,
      model: rec.model,
      cwd: rec.cwd,
      mode: rec.mode,
      status,
      isSandbox: rec.isSandbox,
      messageCount: rec.messageCount,
      createdAt: rec.createdAt,
      updatedAt: rec.updatedAt,
    };
    return this.withOptional(s, rec, trustOf(rec.cwd), worktrees);
  }

  /** The optional fields a summary and a view share, set only when they say something. */
  private withOptional<T extends SessionSummary | SessionView>(
    out: T,
    rec: SessionListEntry | SessionRecord,
    trust: ProjectTrustPrompt | undefined,
    worktrees: SessionWorktrees | undefined,
  ): T {
    if (rec.title) out.title = rec.title;
    if (rec.pinned) out.pinned = true;
    if (trust) out.projectTrust = trust;
    const waiting = this.parts.waiting.of(rec);
    if (waiting) out.waiting = waiting;
    const worktree = worktrees?.info(rec.id);
    if (worktree) out.worktree = worktree;
    return out;
  }

  async view(id: string, turns: number, imageUrl?: MessageImageUrl): Promise<SessionView> {
    const rec = await this.parts.require(id);
    const page = await this.store.historyPage(id, turns);
    return this.assemble(rec, toDisplayMessages(page.messages, id, imageUrl), page.oldestSeq, page.hasMoreHistory);
  }

  /**
   * The view of a read that covers the whole of a long session as UTF-8 JSON (the text of `view`'s answer, in parts
   * to be sent one after the other), or undefined for any other read. Read, folded and serialised a page of rows at a
   * time, each page's text moved out of the JavaScript heap at once, so little of it is alive at any time: built
   * whole, a 10,000-message session (~4 MiB of JSON) survived every collection of the daemon's small young
   * generation, and the collector cost more than the work (docs/benchmarks.md, issue 27).
   */
  async wholeView(id: string, turns: number, imageUrl?: MessageImageUrl): Promise<Uint8Array[] | undefined> {
    // Every user turn is one of the counted messages, so asking for as many turns as there are messages asks for all;
    // fewer turns than a long session's messages are never all (no record read for them: `view` reads it).
    if (!this.store.readMessages || turns < WHOLE_READ_FROM) return undefined;
    const rec = await this.parts.require(id);
    if (rec.messageCount < WHOLE_READ_FROM || turns < rec.messageCount) return undefined;
    const folder = new DisplayFolder(id, imageUrl);
    // The view's JSON in parts: what comes before the messages, then each page's messages (the text of a page's array
    // without its brackets, each page after the first preceded by a comma), then what comes after them. Sent as they
    // are: no copy of the whole (a 4 MiB Buffer.concat cost ~9 ms of page faults and copying per read).
    const parts: Buffer[] = [];
    let oldestSeq: number | null = null;
    for (let after = -1; ; ) {
      const rows = await this.store.readMessages(id, after, WHOLE_READ_PAGE);
      const last = rows.at(-1);
      oldestSeq ??= rows[0]?.seq ?? null;
      folder.add(rows);
      const done = folder.take(!last || rows.length < WHOLE_READ_PAGE);
      if (done.length > 0) {
        if (parts.length > 0) parts.push(COMMA);
        // Encoded as JSON.stringify made it, the brackets cut from the bytes: no second string of the page's text.
        const page = Buffer.from(JSON.stringify(done));
        parts.push(page.subarray(1, page.length - 1));
      }
      if (!last || rows.length < WHOLE_READ_PAGE) break;
      after = last.seq;
    }
    const json = JSON.stringify(await this.assemble(rec, MESSAGES_HERE, oldestSeq, false));
    const at = json.indexOf(MESSAGES_HERE_JSON);
    // The marker holds a NUL, which no field before the messages should; were it there, the view is built whole.
    if (at === -1 || json.indexOf(MESSAGES_HERE_JSON, at + 1) !== -1) {
      return [Buffer.from(JSON.stringify(await this.view(id, turns, imageUrl)))];
    }
    parts.unshift(Buffer.from(`${json.slice(0, at)}[`));
    parts.push(Buffer.from(`]${json.slice(at + MESSAGES_HERE_JSON.length)}`));
    return parts;
  }

  private async assemble(
    rec: SessionRecord,
    messages: SessionView["messages"],
    oldestSeq: number | null,
    hasMoreHistory: boolean,
  ): Promise<SessionView> {
    const id = rec.id;
    const v: SessionView = {
      id: rec.id,
      persona: rec.persona,
      model: rec.model,
      cwd: rec.cwd,
      mode: rec.mode,
      isSandbox: rec.isSandbox,
      shareToken: rec.shareToken,
      shareToolResults: rec.meta.shareToolResults === true,
      status: this.parts.turns().status(id),
      turnStartedAt: this.parts.turns().turnStartedAt(id),
      streaming: this.parts.turns().streaming(id),
      messages,
      oldestSeq,
      hasMoreHistory,
      messageCount: rec.messageCount,
      usage: rec.usage,
      createdAt: rec.createdAt,
      updatedAt: rec.updatedAt,
      lastSeq: this.events.currentSeq(id),
      ...(await this.pending(rec)),
    };
    if (rec.meta.lastTurnError) v.lastError = rec.meta.lastTurnError;
    return this.withOptional(v, rec, this.parts.projectTrust(rec.cwd), this.parts.worktrees());
  }

  async history(id: string, beforeSeq: number, turns: number, imageUrl?: MessageImageUrl): Promise<SessionHistory> {
    await this.parts.require(id);
    const page = await this.store.historyPage(id, turns, beforeSeq);
    return {
      messages: toDisplayMessages(page.messages, id, imageUrl),
      oldestSeq: page.oldestSeq,
      hasMoreHistory: page.hasMoreHistory,
    };
  }

  /**
   * The decisions the session waits for, as the first frame and GET /sessions/{id} list them: those of its running
   * turn (another daemon's, read from the stored events, when another daemon of a team runs it) and a pending plan
   * transition (kept in the record).
   */
  private async pending(rec: SessionRecord): Promise<Record<string, unknown>> {
    const turn = (await this.parts.turns().remotePending?.(rec)) ?? this.parts.turns().pending(rec);
    return rec.meta.planTransition ? { ...turn, planTransition: rec.meta.planTransition } : turn;
  }

  /** The first frame of a session stream: the present state. */
  async statusFrame(id: string): Promise<SessionEventOf<"status"> & { lastSeq: number }> {
    const rec = await this.parts.require(id);
    const startedAt = this.parts.turns().turnStartedAt(id);
    const frame: SessionEventOf<"status"> & { lastSeq: number } = {
      type: "status",
      sessionId: id,
      status: this.parts.turns().status(id),
      mode: rec.mode,
      lastSeq: this.events.currentSeq(id),
      ...(await this.pending(rec)),
    };
    if (startedAt !== null) frame.startedAt = startedAt;
    const trust = this.parts.projectTrust(rec.cwd);
    if (trust) frame.projectTrust = trust;
    return frame;
  }

  /** The first message the user wrote (reminders are the daemon's), read from the start, not the whole. */
  async firstUserText(id: string): Promise<string | undefined> {
    const isTask = (m: StoredMessage) => m.role === "user" && typeof m.content === "string" && !m.meta?.reminder;
    if (!this.store.readMessages) {
      const found = (await this.store.historyPage(id, Number.MAX_SAFE_INTEGER)).messages.find(isTask);
      return found?.content as string | undefined;
    }
    for (let after = 0; ; ) {
      const page = await this.store.readMessages(id, after, 200);
      const found = page.find(isTask);
      if (found) return found.content as string;
      const last = page.at(-1);
      if (!last || page.length < 200) return undefined;
      after = last.seq;
    }
  }
}
