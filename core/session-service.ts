import type { DisplayMessage, MessageImageUrl } from "./display.js";
import type { SessionEvent, SessionEventOf } from "./events.js";
import type { ProjectContext } from "./project.js";
import type {
  ProjectTrustPrompt,
  SessionMode,
  SessionRecord,
  SessionStatus,
  SessionSummary,
  SessionUsage,
} from "./session-types.js";
import type { SessionWriter } from "./session-writer.js";
import type { ListQuery, SessionDirectory, SessionListEntry } from "./store.js";
import { createToken } from "./tokens.js";
import type { TurnController } from "./turns.js";
import type { SessionWorktrees, WorktreeInfo, WorktreeRequest } from "./worktrees.js";

export interface CreateSessionInput {
  persona?: string;
  model?: string;
  cwd?: string;
  title?: string;
  /** A git worktree of `cwd`'s repository for the session (true: defaults). */
  worktree?: boolean | WorktreeRequest;
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
  shareToolResults: boolean;
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

/** A page of older history (GET /sessions/{id}/history). */
export interface SessionHistory {
  messages: DisplayMessage[];
  oldestSeq: number | null;
  hasMoreHistory: boolean;
}

/**
 * The session layer as plugins use it (the host provides it): sessions' lifecycle and metadata, their event streams,
 * and the views the routes answer with. Every change is persisted before it is announced.
 */
export interface SessionService {
  /** The session record (its event log loaded), or a 404 (`session_not_found`). */
  require(id: string): Promise<SessionRecord>;
  /** The session record (its event log loaded), or undefined. */
  find(id: string): Promise<SessionRecord | undefined>;
  create(input: CreateSessionInput): Promise<SessionRecord>;
  list(query: ListQuery): Promise<{ sessions: SessionSummary[]; total: number }>;
  /** `list({})`'s sessions (every session, unfiltered) as UTF-8 JSON, in parts whose concatenation is the text. */
  listAllJson(): Promise<Uint8Array[]>;
  /** A session's summary as listings and the feed show it. */
  summary(
    rec: SessionListEntry | SessionRecord,
    trustOf?: (cwd: string) => ProjectTrustPrompt | undefined,
    status?: SessionStatus,
  ): SessionSummary;
  /** GET /sessions/{id}: the record, its status and the last `turns` turns of its history. */
  view(id: string, turns: number, imageUrl?: MessageImageUrl): Promise<SessionView>;
  /**
   * `view`'s answer as UTF-8 JSON, in parts whose concatenation is the text, when the read covers the whole of a long
   * session (read and serialised in pages), else undefined: then ask `view`.
   */
  wholeView(id: string, turns: number, imageUrl?: MessageImageUrl): Promise<Uint8Array[] | undefined>;
  history(id: string, beforeSeq: number, turns: number, imageUrl?: MessageImageUrl): Promise<SessionHistory>;
  /** The first frame of a session stream: the present state. */
  statusFrame(id: string): Promise<SessionEventOf<"status"> & { lastSeq: number }>;
  /**
   * The sessions working in `dir` (with `below`, also in the directories under it), read from the store page by
   * page as the caller iterates (an index, not a read of every session).
   */
  sessionsIn(dir: string, opts?: { below?: boolean }): AsyncIterable<SessionDirectory>;
  /** Whether `dir` is some session's working directory or lies inside one. */
  inSessionDirectory(dir: string): Promise<boolean>;
  /** Every distinct working directory of the sessions, read page by page as the caller iterates. */
  sessionDirectories(): AsyncIterable<string>;
  rename(id: string, title: string): Promise<SessionRecord>;
  setPinned(id: string, pinned: boolean): Promise<SessionRecord>;
  setMode(id: string, mode: SessionMode): Promise<SessionRecord>;
  /** The session's share token (made on first share); `toolResults`: whether the page shows tool results. */
  share(id: string, opts?: { toolResults?: boolean }): Promise<string>;
  unshare(id: string): Promise<boolean>;
  /** An independent copy of what is in the model's context; refused while a turn runs. */
  fork(id: string): Promise<SessionRecord>;
  /**
   * Publishes an event on the session's stream (and its audit trail). Its sequence number may be given out later
   * (a store several daemons share numbers events when it commits them).
   */
  publish(id: string, event: SessionEvent): void;
  /** The last sequence number given out on the session's stream (0 when none). */
  lastSeq(id: string): number;
  /** Stores every published event now and resolves once they are stored. */
  commit(): Promise<void>;
  /** Empties the working set sent to the model (the visible history stays); `assertIdle` throws while a turn runs. */
  cleanContext(id: string, assertIdle: () => void): Promise<{ originalTask?: string }>;
  /** Ends the session's running turn and closes its streams; data is kept. */
  unload(id: string): Promise<void>;
  deletePermanently(id: string): Promise<void>;
  /** Persists a metadata change and announces it on both streams. */
  update(id: string, patch: Partial<Omit<SessionRecord, "id" | "createdAt">>): Promise<SessionRecord>;
  /** A turn started or ended: updatedAt moves and the summary with that status is announced. */
  statusChanged(id: string, status: SessionStatus): Promise<void>;
  /** Announces the session's current summary on both streams. */
  announce(type: "session_created" | "session_update", rec: SessionRecord, status?: SessionStatus): void;
  /** The one writer of session records: the turn engine's port (core/agent holds no store). */
  readonly writer: SessionWriter;
  /** Who runs turns (idle everywhere without the agent plugin). */
  readonly turnController: TurnController;
  /** The session's worktree, if it has one. */
  worktreeOf(id: string): WorktreeInfo | undefined;
  /** The pending trust prompt of a working directory, if any. */
  projectTrust(cwd: string): ProjectTrustPrompt | undefined;
}

export const SessionServiceToken = createToken<SessionService>("sessions");

/** What new sessions get when the request does not say (`SessionManager`'s construction). */
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

/**
 * What the session layer asks other parts of the daemon, each resolved on use (the plugin that answers may load
 * after the service is made, or not at all): it asks, never is told, so its behaviour does not depend on load order.
 */
export interface SessionPorts {
  /**
   * Who runs turns: status, live blocks, pending decisions, abort. Without it every session is idle. Data flows one
   * way: the turn engine writes through this service, this service only reads the port.
   */
  turns?: () => TurnController | undefined;
  /** The project plugin: trust prompts, and the personas a session may name beyond the registered ones. */
  project?: () => ProjectContext | undefined;
  /** The worktree plugin: sessions with a git worktree of their own. */
  worktrees?: () => SessionWorktrees | undefined;
}
