import { randomBytes } from "node:crypto";
import { mkdirSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { Persona } from "./contributions.js";
import { type DisplayMessage, type MessageImageUrl, toDisplayMessages } from "./display.js";
import { ApiError } from "./errors.js";
import type { SessionEventLog } from "./event-log.js";
import type { EventBus, SessionEvent, SessionEventOf } from "./events.js";
import type { Registry } from "./registry.js";
import {
  emptyUsage,
  type ProjectTrustPrompt,
  type SessionMode,
  type SessionRecord,
  type SessionStatus,
  type SessionSummary,
  type SessionUsage,
} from "./session-types.js";
import type { ListQuery, SessionListEntry, SessionStore } from "./store.js";
import { createToken } from "./tokens.js";
import { idleTurns, type TurnController } from "./turns.js";

export interface SessionDefaults {
  /** Model for new sessions when the request names none. */
  model(): string;
  /** Persona for new sessions when the request names none. */
  persona(): string;
  /** Initial meta of new sessions (daemon-wide defaults such as the permission mode). */
  meta?(): Record<string, unknown>;
  /** Directory for new sessions when the request names none. */
  cwd: string;
  /** Where `cwd: "sandbox"` sessions get their scratch directory. */
  sandboxRoot: string;
}

export interface CreateSessionInput {
  persona?: string;
  model?: string;
  cwd?: string;
  title?: string;
}

/** GET /sessions/{id}. */
export interface SessionView {
  id: string;
  persona: string;
  model: string;
  cwd: string;
  mode: SessionMode;
  title?: string;
  pinned?: boolean;
  isSandbox: boolean;
  shareToken: string | null;
  status: SessionStatus;
  turnStartedAt: number | null;
  streaming: unknown[] | null;
  messages: DisplayMessage[];
  oldestSeq: number | null;
  hasMoreHistory: boolean;
  messageCount: number;
  usage: SessionUsage;
  createdAt: string;
  updatedAt: string;
  /** The stream's last event when this view was taken (a client resumes its stream from it). */
  lastSeq: number;
  [pending: string]: unknown;
}

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
export class SessionService {
  /**
   * @param turnPort who runs turns, asked (never told) about a session's turn: status, live blocks, pending decisions,
   *   abort. Resolved on use, so the session layer works before (and without) the agent plugin: every session is
   *   idle then. Data flows one way: the turn engine writes through this service, this service only reads the port.
   */
  constructor(
    private readonly store: SessionStore,
    private readonly events: SessionEventLog,
    private readonly bus: EventBus,
    private readonly personas: Registry<Persona>,
    private readonly defaults: SessionDefaults,
    private readonly turnPort: () => TurnController | undefined = () => undefined,
  ) {}

  private get turns(): TurnController {
    return this.turnPort() ?? idleTurns;
  }

  private personaVisible: (name: string, cwd: string) => boolean = (name) => this.personas.has(name);
  private trustProbe: (cwd: string) => ProjectTrustPrompt | undefined = () => undefined;

  /**
   * Lets the project plugin say which sessions wait for a trust decision: the prompt is then part of every
   * summary, of GET /sessions/{id} and of the first frame of the session's stream, so late clients see it.
   */
  setProjectTrustProbe(probe: (cwd: string) => ProjectTrustPrompt | undefined): void {
    this.trustProbe = probe;
  }

  /** The pending trust prompt of a working directory, if any (a failing probe never breaks a listing). */
  projectTrust(cwd: string): ProjectTrustPrompt | undefined {
    try {
      return this.trustProbe(cwd);
    } catch {
      return undefined;
    }
  }

  /** Lets the project plugin accept global and (trusted) project personas at creation, not only registered ones. */
  setPersonaResolver(visible: (name: string, cwd: string) => boolean): void {
    this.personaVisible = visible;
  }

  get turnController(): TurnController {
    return this.turns;
  }

  /** The session record, or a 404. Malformed ids are simply unknown sessions. */
  require(id: string): SessionRecord {
    const rec = ID_RE.test(id) ? this.store.getSession(id) : undefined;
    if (!rec) throw ApiError.notFound(`Session not found: ${ID_RE.test(id) ? id : "(invalid id)"}`);
    return rec;
  }

  find(id: string): SessionRecord | undefined {
    return ID_RE.test(id) ? this.store.getSession(id) : undefined;
  }

  create(input: CreateSessionInput): SessionRecord {
    const personaName = input.persona ?? this.defaults.persona();
    const id = newSessionId();
    const isSandbox = input.cwd === "sandbox";
    const cwd = isSandbox ? join(this.defaults.sandboxRoot, id) : resolveDirectory(input.cwd ?? this.defaults.cwd);
    if (!this.personaVisible(personaName, cwd)) {
      throw ApiError.notFound(`Unknown persona "${personaName}" (known: ${this.personaNames().join(", ") || "none"})`);
    }
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
    this.store.createSession(rec);
    this.announce("session_created", rec);
    return rec;
  }

  list(query: ListQuery): { sessions: SessionSummary[]; total: number } {
    const { sessions, total } = this.store.listEntries?.(query) ?? this.store.listSessions(query);
    // Sessions share directories: ask for each directory's trust prompt once per listing.
    const prompts = new Map<string, ProjectTrustPrompt | undefined>();
    const trustOf = (cwd: string) => {
      if (!prompts.has(cwd)) prompts.set(cwd, this.projectTrust(cwd));
      return prompts.get(cwd);
    };
    return { sessions: sessions.map((s) => this.summary(s, trustOf)), total };
  }

  summary(
    rec: SessionListEntry,
    trustOf: (cwd: string) => ProjectTrustPrompt | undefined = (cwd) => this.projectTrust(cwd),
    status: SessionStatus = this.turns.status(rec.id),
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
    if (rec.title) s.title = rec.title;
    if (rec.pinned) s.pinned = true;
    const trust = trustOf(rec.cwd);
    if (trust) s.projectTrust = trust;
    return s;
  }

  view(id: string, turns: number, imageUrl?: MessageImageUrl): SessionView {
    const rec = this.require(id);
    const page = this.store.historyPage(id, turns);
    const v: SessionView = {
      id: rec.id,
      persona: rec.persona,
      model: rec.model,
      cwd: rec.cwd,
      mode: rec.mode,
      isSandbox: rec.isSandbox,
      shareToken: rec.shareToken,
      status: this.turns.status(id),
      turnStartedAt: this.turns.turnStartedAt(id),
      streaming: this.turns.streaming(id),
      messages: toDisplayMessages(page.messages, id, imageUrl),
      oldestSeq: page.oldestSeq,
      hasMoreHistory: page.hasMoreHistory,
      messageCount: rec.messageCount,
      usage: rec.usage,
      createdAt: rec.createdAt,
      updatedAt: rec.updatedAt,
      lastSeq: this.events.currentSeq(id),
      ...this.turns.pending(id),
    };
    if (rec.title) v.title = rec.title;
    if (rec.pinned) v.pinned = true;
    const trust = this.projectTrust(rec.cwd);
    if (trust) v.projectTrust = trust;
    return v;
  }

  history(id: string, beforeSeq: number, turns: number, imageUrl?: MessageImageUrl) {
    this.require(id);
    const page = this.store.historyPage(id, turns, beforeSeq);
    return {
      messages: toDisplayMessages(page.messages, id, imageUrl),
      oldestSeq: page.oldestSeq,
      hasMoreHistory: page.hasMoreHistory,
    };
  }

  /** The first frame of a session stream: the present state. */
  statusFrame(id: string): SessionEventOf<"status"> {
    const rec = this.require(id);
    const startedAt = this.turns.turnStartedAt(id);
    const frame: SessionEventOf<"status"> = {
      type: "status",
      sessionId: id,
      status: this.turns.status(id),
      mode: rec.mode,
      lastSeq: this.events.currentSeq(id),
      ...this.turns.pending(id),
    };
    if (startedAt !== null) frame.startedAt = startedAt;
    const trust = this.projectTrust(rec.cwd);
    if (trust) frame.projectTrust = trust;
    return frame;
  }

  rename(id: string, title: string): SessionRecord {
    this.require(id);
    const t = title.trim().slice(0, 200);
    const rec = this.update(id, { title: t || null });
    return rec;
  }

  setPinned(id: string, pinned: boolean): SessionRecord {
    this.require(id);
    return this.update(id, { pinned });
  }

  setMode(id: string, mode: SessionMode): SessionRecord {
    this.require(id);
    return this.update(id, { mode });
  }

  share(id: string): string {
    const rec = this.require(id);
    if (rec.shareToken) return rec.shareToken;
    const token = randomBytes(24).toString("base64url");
    this.update(id, { shareToken: token });
    return token;
  }

  unshare(id: string): boolean {
    const rec = this.require(id);
    if (!rec.shareToken) return false;
    this.update(id, { shareToken: null });
    return true;
  }

  /** An independent copy of what is in the model's context; refused while a turn runs. */
  fork(id: string): SessionRecord {
    const src = this.require(id);
    if (this.turns.status(id) === "running") {
      throw ApiError.conflict("A turn is running in this session; abort it before forking");
    }
    const now = new Date().toISOString();
    const rec: SessionRecord = {
      ...src,
      id: newSessionId(),
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
    this.store.createSession(rec);
    for (const m of this.store.contextMessages(id)) {
      const { seq: _seq, createdAt: _c, ...rest } = m;
      this.store.appendMessage(rec.id, rest);
    }
    const saved = this.require(rec.id);
    this.announce("session_created", saved);
    return saved;
  }

  /** Publishes an event on the session's stream (and its audit trail). */
  publish(id: string, event: SessionEvent): number {
    return this.events.publish(id, event);
  }

  /** The last sequence number given out on the session's stream (0 when none). */
  lastSeq(id: string): number {
    return this.events.currentSeq(id);
  }

  /**
   * Writes every published event to the store now (one synchronous transaction) instead of at the end of the
   * tick: for the steps that must be durable before they are acknowledged (a turn's start before its 202).
   */
  commit(): void {
    this.events.flushAll();
  }

  /**
   * Empties the working set sent to the model; the visible history stays. `assertIdle` throws (409) while a
   * turn runs. Returns the first user message of the session as the original task.
   */
  cleanContext(id: string, assertIdle: () => void): { body: { ok: true; originalTask?: string } } {
    const rec = this.require(id);
    assertIdle();
    this.store.markOutOfContext(id);
    const { compactionSummary: _s, ...meta } = rec.meta;
    this.update(id, { meta });
    const first = this.store
      .historyPage(id, Number.MAX_SAFE_INTEGER)
      .messages.find((m) => m.role === "user" && typeof m.content === "string" && !m.meta?.reminder);
    const body: { ok: true; originalTask?: string } = { ok: true };
    if (first && typeof first.content === "string") body.originalTask = first.content;
    this.events.publish(id, { type: "context_cleaned" });
    return { body };
  }

  /** Unloads the session from the daemon: ends its running turn and closes its streams. Data is kept. */
  async unload(id: string): Promise<void> {
    this.require(id);
    await this.turns.abort(id, "unload");
    this.events.publish(id, { type: "session_closed" });
  }

  async deletePermanently(id: string): Promise<void> {
    const rec = this.require(id);
    await this.turns.abort(id, "delete");
    const summary = this.summary(rec);
    this.events.publish(id, { type: "session_closed", deleted: true });
    this.events.forget(id);
    this.store.deleteSession(id);
    this.events.publishFeed({ type: "session_deleted", sessionId: id, session: summary });
    this.bus.emit({ type: "session.deleted", sessionId: id, session: summary });
  }

  /** Persists a metadata change and announces it on both streams. */
  update(id: string, patch: Partial<Omit<SessionRecord, "id" | "createdAt">>): SessionRecord {
    const rec = this.store.updateSession(id, patch);
    if (!rec) throw ApiError.notFound(`Session not found: ${id}`);
    this.announce("session_update", rec);
    return rec;
  }

  /**
   * A turn started or ended: the session's updatedAt moves and its summary, with the status the turn engine states,
   * is announced on both streams. The turn engine says what the status is; nothing here asks it back.
   */
  statusChanged(id: string, status: SessionStatus): void {
    const rec = this.store.updateSession(id, {});
    if (rec) this.announce("session_update", rec, status);
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

function resolveDirectory(dir: string): string {
  if (!isAbsolute(dir)) throw ApiError.badRequest(`cwd must be an absolute path: ${dir}`);
  let st: ReturnType<typeof statSync> | undefined;
  try {
    st = statSync(dir);
  } catch {
    throw ApiError.badRequest(`cwd does not exist: ${dir}`);
  }
  if (!st.isDirectory()) throw ApiError.badRequest(`cwd is not a directory: ${dir}`);
  return realpathSync(dir);
}

export const SessionServiceToken = createToken<SessionService>("sessions");
export const SessionEventLogToken = createToken<SessionEventLog>("session-event-log");
