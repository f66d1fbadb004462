import type { NewMessage, SessionRecord, StoredEvent, StoredMessage } from "./session-types.js";
import { createToken } from "./tokens.js";

export interface ListQuery {
  q?: string;
  limit?: number;
  offset?: number;
}

/** The session fields a listing shows: no usage, meta or share token (the JSON columns stay unparsed). */
export type SessionListEntry = Pick<
  SessionRecord,
  | "id"
  | "title"
  | "pinned"
  | "persona"
  | "model"
  | "cwd"
  | "mode"
  | "isSandbox"
  | "messageCount"
  | "createdAt"
  | "updatedAt"
>;

export interface HistoryPage {
  messages: StoredMessage[];
  /** seq of the first message in the page, null when empty. */
  oldestSeq: number | null;
  hasMoreHistory: boolean;
}

export interface MessageHit {
  sessionId: string;
  sessionTitle: string | null;
  seq: number;
  role: string;
  /** A short excerpt around the match. */
  snippet: string;
  createdAt: string;
}

export interface EventToAppend {
  seq: number;
  ts: string;
  type: string;
  json: string;
  /** Deltas (token, thinking) are replayable but not part of the audit trail. */
  ephemeral: boolean;
}

/**
 * Persistence for sessions, their append-only message history and their event log. Synchronous on purpose:
 * the built-in implementation is SQLite through better-sqlite3, where a synchronous call is the fast path.
 */
export interface SessionStore {
  createSession(rec: SessionRecord): void;
  getSession(id: string): SessionRecord | undefined;
  /** Applies a partial update and bumps `updatedAt` unless given. Returns the new record, or undefined. */
  updateSession(id: string, patch: Partial<Omit<SessionRecord, "id" | "createdAt">>): SessionRecord | undefined;
  /** Deletes the session with its messages and events. */
  deleteSession(id: string): boolean;
  listSessions(query: ListQuery): { sessions: SessionRecord[]; total: number };
  /** Optional: `listSessions` with only the listing's fields (GET /sessions); the service falls back to listSessions. */
  listEntries?(query: ListQuery): { sessions: SessionListEntry[]; total: number };
  findByShareToken(token: string): SessionRecord | undefined;

  /** Appends one message, assigning the next per-session seq; also bumps the session's updatedAt/messageCount. */
  appendMessage(sessionId: string, msg: NewMessage): StoredMessage;
  /** The most recent `turns` user turns (a page starts at a user message), before `beforeSeq` when given. */
  historyPage(sessionId: string, turns: number, beforeSeq?: number): HistoryPage;
  /** Optional: messages with seq > afterSeq in order, at most `limit` (whole-history readers page with it). */
  readMessages?(sessionId: string, afterSeq: number, limit: number): StoredMessage[];
  /** Messages currently in the model's context, in order. */
  contextMessages(sessionId: string): StoredMessage[];
  /** Marks messages up to and including `seq` as out of context (all when seq is undefined). */
  markOutOfContext(sessionId: string, uptoSeq?: number): void;
  /** Deletes messages with seq >= fromSeq (undo). */
  truncateMessages(sessionId: string, fromSeq: number): void;
  hasClientMessageId(sessionId: string, clientMessageId: string): boolean;
  /** Full-text search over message text of all sessions (or one), newest first. */
  searchMessages(query: string, opts?: { sessionId?: string; excludeSessionId?: string; limit?: number }): MessageHit[];

  appendEvents(sessionId: string, events: EventToAppend[]): void;
  /** Events with seq > afterSeq in order, at most `limit`. */
  readEvents(sessionId: string, afterSeq: number, limit: number, opts?: { durableOnly?: boolean }): StoredEvent[];
  /** The high-water mark of reserved event sequence numbers (see SessionEventLog). */
  eventSeqReserved(sessionId: string): number;
  reserveEventSeq(sessionId: string, upTo: number): void;

  /** The all-sessions feed (lifecycle events), with its own global sequence. */
  appendFeed(event: { seq: number; ts: string; type: string; json: string }): void;
  readFeed(afterSeq: number, limit: number): StoredEvent[];
  feedSeq(): number;

  /**
   * Optional: runs `fn` as one transaction (store calls inside it join it). The event log writes the batched
   * deltas of all sessions through it, one commit per batch instead of one per session.
   */
  batch?<T>(fn: () => T): T;

  close(): void;
}

export const SessionStoreToken = createToken<SessionStore>("session-store");
