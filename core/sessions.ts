import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Persona } from "./contributions.js";
import type { MessageImageUrl } from "./display.js";
import { ApiError } from "./errors.js";
import type { EventLog } from "./event-log-types.js";
import type { EventBus, SessionEvent, SessionEventOf } from "./events.js";
import type { Registry } from "./registry.js";
import { resolveDirectory, SessionDirectories } from "./session-directories.js";
import type {
  CreateSessionInput,
  SessionDefaults,
  SessionHistory,
  SessionPorts,
  SessionService,
  SessionView,
} from "./session-service.js";
import {
  emptyUsage,
  type ProjectTrustPrompt,
  type SessionMode,
  type SessionRecord,
  type SessionStatus,
  type SessionSummary,
} from "./session-types.js";
import { SessionViews } from "./session-views.js";
import { WaitingDecisions } from "./session-waiting.js";
import { SessionRecordWriter, type SessionWriter } from "./session-writer.js";
import type { ListQuery, SessionDirectory, SessionListEntry, SessionStore } from "./store.js";
import { createToken } from "./tokens.js";
import { idleTurns, type TurnController } from "./turns.js";
import type { SessionWorktrees, WorktreeInfo } from "./worktrees.js";

const ID_RE = /^[A-Za-z0-9_-]{1,64}$/;

export function newSessionId(): string {
  const rand = BigInt(`0x${randomBytes(6).toString("hex")}`)
    .toString(36)
    .padStart(9, "0");
  return `${Date.now().toString(36)}${rand}`;
}

export const DEFAULT_HISTORY_TURNS = 30;

/**
 * Session lifecycle and metadata. Every change is persisted before it is announced; lifecycle changes go to the
 * session's own stream and to the all-sessions feed with the full summary.
 */
export class SessionManager implements SessionService {
  /** The one writer of session records (the turn engine's port; the session layer's own writes go through it too). */
  readonly writer: SessionWriter;
  /** What each session waits for from its user (summaries' `waiting`). */
  private readonly waiting: WaitingDecisions;
  private readonly directories: SessionDirectories;
  private readonly views: SessionViews;

  constructor(
    private readonly store: SessionStore,
    private readonly events: EventLog,
    private readonly bus: EventBus,
    private readonly personas: Registry<Persona>,
    private readonly defaults: SessionDefaults,
    private readonly ports: SessionPorts = {},
  ) {
    this.waiting = new WaitingDecisions(
      (id) => this.find(id),
      (rec) => this.announce("session_update", rec),
    );
    this.directories = new SessionDirectories(store);
    this.views = new SessionViews(store, events, {
      require: (id) => this.require(id),
      turns: () => this.turns,
      waiting: this.waiting,
      projectTrust: (cwd) => this.projectTrust(cwd),
      worktrees: () => this.worktrees,
    });
    this.writer = new SessionRecordWriter(store, {
      announce: (rec, status) => this.announce("session_update", rec, status),
      decisionsChanged: (id, waiting) => this.waiting.changed(id, waiting),
      durable: () => this.events.durable(),
    });
  }

  private get turns(): TurnController {
    return this.ports.turns?.() ?? idleTurns;
  }

  /** The worktree plugin's part, when it is loaded: sessions with a git worktree of their own. */
  private get worktrees(): SessionWorktrees | undefined {
    return this.ports.worktrees?.();
  }

  /** The session's worktree, if it has one. */
  worktreeOf(id: string): WorktreeInfo | undefined {
    return this.worktrees?.info(id);
  }

  /**
   * The pending trust prompt of a working directory, if any: part of every summary, of GET /sessions/{id} and of the
   * first frame of the session's stream, so late clients see it. A failing probe never breaks a listing.
   */
  projectTrust(cwd: string): ProjectTrustPrompt | undefined {
    try {
      return this.ports.project?.()?.trustPrompt(cwd);
    } catch {
      return undefined;
    }
  }

  /** Whether a persona may be named at creation: a registered one, or a global or (trusted) project one. */
  private personaVisible(name: string, cwd: string): boolean {
    const project = this.ports.project?.();
    return project ? project.personas(cwd).some((p) => p.name === name) : this.personas.has(name);
  }

  get turnController(): TurnController {
    return this.turns;
  }

  /**
   * The session record, or a 404. Malformed ids are simply unknown sessions. Its event log is loaded too: whoever
   * asked for a session may publish on its stream at once.
   */
  async require(id: string): Promise<SessionRecord> {
    const rec = await this.find(id);
    if (!rec)
      throw ApiError.notFound(`Session not found: ${ID_RE.test(id) ? id : "(invalid id)"}`, "session_not_found");
    return rec;
  }

  /** The session record (its event log loaded), or undefined. */
  async find(id: string): Promise<SessionRecord | undefined> {
    if (!ID_RE.test(id)) return undefined;
    const rec = await this.store.getSession(id);
    if (rec) await this.events.load(id);
    return rec;
  }

  async create(input: CreateSessionInput): Promise<SessionRecord> {
    const personaName = input.persona ?? this.defaults.persona();
    const id = newSessionId();
    const isSandbox = input.cwd === "sandbox";
    let cwd = isSandbox ? join(this.defaults.sandboxRoot, id) : resolveDirectory(input.cwd ?? this.defaults.cwd);
    if (!this.personaVisible(personaName, cwd)) {
      throw ApiError.notFound(`Unknown persona "${personaName}" (known: ${this.personaNames().join(", ") || "none"})`);
    }
    const wanted = input.worktree === true ? {} : input.worktree || undefined;
    if (wanted && isSandbox) throw ApiError.badRequest("A sandbox session cannot have a worktree");
    if (wanted && !this.worktrees) throw ApiError.badRequest("Worktrees are not available in this daemon");
    if (wanted && this.worktrees) cwd = (await this.worktrees.create(id, cwd, wanted)).path;
    if (isSandbox) mkdirSync(cwd, { recursive: true });
    const now = new Date().toISOString();
    const rec: SessionRecord = {
      id,
      title: input.title?.trim() ? input.title.trim().slice(0, 200) : null,
      pinned: false,
      persona: personaName,
      model: input.model ?? this.defaults.model(),
      cwd,
      mode: "build",
      isSandbox,
      shareToken: null,
      messageCount: 0,
      usage: emptyUsage(),
      createdAt: now,
      updatedAt: now,
      meta: this.defaults.meta?.() ?? {},
    };
    await this.storeWithWorktree(rec, wanted !== undefined);
    await this.events.load(id);
    if (wanted) await this.worktrees?.ready(id);
    this.announce("session_created", rec);
    return rec;
  }

  /** Stores a new session; a worktree made for it is removed again when that fails. */
  private async storeWithWorktree(rec: SessionRecord, hasWorktree: boolean): Promise<void> {
    try {
      await this.store.createSession(rec);
    } catch (err) {
      if (hasWorktree) await this.worktrees?.remove(rec.id);
      throw err;
    }
  }

  sessionsIn(dir: string, opts: { below?: boolean } = {}): AsyncIterable<SessionDirectory> {
    return this.directories.sessionsIn(dir, opts);
  }

  inSessionDirectory(dir: string): Promise<boolean> {
    return this.directories.inSessionDirectory(dir);
  }

  sessionDirectories(): AsyncIterable<string> {
    return this.directories.sessionDirectories();
  }

  list(query: ListQuery): Promise<{ sessions: SessionSummary[]; total: number }> {
    return this.views.list(query);
  }

  listAllJson(): Promise<Uint8Array[]> {
    return this.views.listAllJson();
  }

  summary(
    rec: SessionListEntry | SessionRecord,
    trustOf?: (cwd: string) => ProjectTrustPrompt | undefined,
    status?: SessionStatus,
  ): SessionSummary {
    return this.views.summary(rec, trustOf, status);
  }

  view(id: string, turns: number, imageUrl?: MessageImageUrl): Promise<SessionView> {
    return this.views.view(id, turns, imageUrl);
  }

  wholeView(id: string, turns: number, imageUrl?: MessageImageUrl): Promise<Uint8Array[] | undefined> {
    return this.views.wholeView(id, turns, imageUrl);
  }

  history(id: string, beforeSeq: number, turns: number, imageUrl?: MessageImageUrl): Promise<SessionHistory> {
    return this.views.history(id, beforeSeq, turns, imageUrl);
  }

  statusFrame(id: string): Promise<SessionEventOf<"status"> & { lastSeq: number }> {
    return this.views.statusFrame(id);
  }

  async rename(id: string, title: string): Promise<SessionRecord> {
    await this.require(id);
    const t = title.trim().slice(0, 200);
    return this.update(id, { title: t || null });
  }

  async setPinned(id: string, pinned: boolean): Promise<SessionRecord> {
    await this.require(id);
    return this.update(id, { pinned });
  }

  async setMode(id: string, mode: SessionMode): Promise<SessionRecord> {
    await this.require(id);
    return this.update(id, { mode });
  }

  /**
   * The session's share token (made on first share). `toolResults`: whether the page shows tool results (file
   * contents, command output); given, it is kept for the link (also for one that exists), else left as it was (off).
   */
  async share(id: string, opts: { toolResults?: boolean } = {}): Promise<string> {
    const rec = await this.require(id);
    const meta =
      opts.toolResults === undefined || opts.toolResults === rec.meta.shareToolResults
        ? undefined
        : { ...rec.meta, shareToolResults: opts.toolResults };
    if (rec.shareToken) {
      if (meta) await this.update(id, { meta, updatedAt: rec.updatedAt });
      return rec.shareToken;
    }
    const token = randomBytes(24).toString("base64url");
    await this.update(id, { shareToken: token, ...(meta ? { meta } : {}) });
    return token;
  }

  async unshare(id: string): Promise<boolean> {
    const rec = await this.require(id);
    if (!rec.shareToken) return false;
    await this.update(id, { shareToken: null });
    return true;
  }

  /** An independent copy of what is in the model's context; refused while a turn runs. */
  async fork(id: string): Promise<SessionRecord> {
    const src = await this.require(id);
    if (this.turns.status(id) === "running") {
      throw ApiError.conflict("A turn is running in this session; abort it before forking", { code: "turn_running" });
    }
    const now = new Date().toISOString();
    const newId = newSessionId();
    // A worktree session's fork gets a worktree of its own, branched from the source worktree's current state.
    const worktree = await this.worktrees?.fork(id, newId);
    const rec: SessionRecord = {
      ...src,
      id: newId,
      cwd: worktree?.path ?? src.cwd,
      title: src.title ? `${src.title} (fork)` : null,
      pinned: false,
      shareToken: null,
      isSandbox: false,
      messageCount: 0,
      usage: emptyUsage(),
      createdAt: now,
      updatedAt: now,
      meta: { ...src.meta, forkedFrom: src.id },
    };
    await this.storeWithWorktree(rec, worktree !== undefined);
    const copy = (await this.store.contextMessages(id)).map(({ seq: _seq, createdAt: _c, ...rest }) => rest);
    if (this.store.appendMessages) await this.store.appendMessages(rec.id, copy);
    else for (const m of copy) await this.store.appendMessage(rec.id, m);
    const saved = await this.require(rec.id);
    if (worktree) await this.worktrees?.ready(rec.id);
    this.announce("session_created", saved);
    return saved;
  }

  /** Publishes an event on the session's stream (and its audit trail). */
  publish(id: string, event: SessionEvent): void {
    this.events.publish(id, event);
  }

  /** The last sequence number given out on the session's stream (0 when none). */
  lastSeq(id: string): number {
    return this.events.currentSeq(id);
  }

  /**
   * Writes every published event to the store now instead of at the end of the tick, and resolves once they are
   * stored: for the steps that must be durable before they are acknowledged (a turn's start before its 202).
   */
  commit(): Promise<void> {
    return this.events.durable();
  }

  /**
   * Empties the working set sent to the model; the visible history stays. `assertIdle` throws (409) while a
   * turn runs. Returns the first user message of the session as the original task.
   */
  async cleanContext(id: string, assertIdle: () => void): Promise<{ originalTask?: string }> {
    await this.require(id);
    assertIdle();
    await this.writer.markOutOfContext(id);
    await this.writer.setMeta(id, { compactionSummary: undefined }, { announce: true });
    // The task: the first message the user wrote (reminders are the daemon's), read from the start, not the whole.
    const first = await this.views.firstUserText(id);
    this.events.publish(id, { type: "context_cleaned" });
    return first === undefined ? {} : { originalTask: first };
  }

  /** Unloads the session from the daemon: ends its running turn and closes its streams. Data is kept. */
  async unload(id: string): Promise<void> {
    await this.require(id);
    await this.turns.abort(id, "unload");
    this.events.publish(id, { type: "session_closed" });
  }

  async deletePermanently(id: string): Promise<void> {
    const rec = await this.require(id);
    await this.turns.abort(id, "delete");
    const summary = this.summary(rec);
    this.events.publish(id, { type: "session_closed", deleted: true });
    // Writes already queued for the session go first: none may land after its rows are gone.
    await this.events.durable();
    this.events.forget(id);
    this.waiting.forget(id);
    await this.store.deleteSession(id);
    // After the row: a crash in between leaves a worktree the next start-up removes, never a session without one.
    await this.worktrees?.remove(id);
    this.events.publishFeed({ type: "session_deleted", sessionId: id, session: summary });
    this.bus.emit({ type: "session.deleted", sessionId: id, session: summary });
  }

  /** Persists a metadata change and announces it on both streams. */
  update(id: string, patch: Partial<Omit<SessionRecord, "id" | "createdAt">>): Promise<SessionRecord> {
    return this.writer.update(id, patch);
  }

  /**
   * A turn started or ended: the session's updatedAt moves and its summary, with the status the turn engine states,
   * is announced on both streams. The turn engine says what the status is; nothing here asks it back.
   */
  statusChanged(id: string, status: SessionStatus): Promise<void> {
    return this.writer.statusChanged(id, status);
  }

  /** Announces the session's current summary (status changes, metadata changes). */
  announce(type: "session_created" | "session_update", rec: SessionRecord, status?: SessionStatus): void {
    const summary = this.summary(rec, undefined, status);
    this.events.publish(rec.id, { type, session: summary });
    this.events.publishFeed({ type, sessionId: rec.id, session: summary });
    this.bus.emit({ type: type === "session_created" ? "session.created" : "session.updated", session: summary });
  }

  private personaNames(): string[] {
    return this.personas.list().map((p) => p.name);
  }
}

export const SessionEventLogToken = createToken<EventLog>("session-event-log");
