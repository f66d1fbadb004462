import { ApiError } from "./errors.js";
import type {
  NewMessage,
  SessionRecord,
  SessionStatus,
  SessionUsage,
  SessionWaiting,
  StoredMessage,
} from "./session-types.js";
import type { SessionStore } from "./store.js";

/** A change of a session's record (not its id or creation time). */
export type SessionPatch = Partial<Omit<SessionRecord, "id" | "createdAt">>;

/**
 * The session layer's writer of session records: the one way the turn engine (core/agent) and the agent's tools read
 * and change a session. Only the session layer implements it ({@link SessionRecordWriter}); the engine holds no
 * store.
 *
 * **Ordering rules** (every write a turn makes follows them):
 * 1. A thing is durable before the event that announces it leaves: a message before its `user_message`,
 *    `assistant_message` or `tool_end`, the usage before `usage`, the status before the summary that states it.
 * 2. A turn's user message is stored after its first model request is sent, and before any of the answer is read.
 * 3. Writes of one session are issued one after the other; a read sees every write issued before it.
 * 4. A meta change is merged into the stored meta as it is now (read in the same step), so it keeps what another
 *    writer (a route, a command, another daemon) changed meanwhile; nothing else is read back from the store.
 *
 * **Round trips.** While a turn holds a session ({@link hold}), its record and its context are read once and kept:
 * every write made through the writer updates the copy, so a turn reads the record at its start and the context at
 * its first model call, and a simple turn writes its user message, the call's usage, the answer and its status.
 * A stored message moves the record's `messageCount` and `updatedAt` in the store, not in the copy: {@link refresh}
 * reads them (the summary a turn's first message announces, the totals at its end).
 */
export interface SessionWriter {
  /** The session's record: while a turn holds the session, the copy kept (see the class comment). */
  record(id: string): Promise<SessionRecord | undefined>;
  /** The record read from the store again (and kept while held). */
  refresh(id: string): Promise<SessionRecord | undefined>;
  /** The messages in the model's context, oldest first (kept while held). */
  context(id: string): Promise<StoredMessage[]>;
  /** The newest stored message's number (0 when there is none). */
  lastMessageSeq(id: string): Promise<number>;
  /** Whether a message with this clientMessageId was stored before. */
  accepted(id: string, clientMessageId: string): Promise<boolean>;
  /** Stores a message (durable when it resolves). */
  appendMessage(id: string, msg: NewMessage): Promise<StoredMessage>;
  /** Adds tokens to the session's totals. */
  addUsage(id: string, add: Partial<SessionUsage>): Promise<void>;
  /**
   * Merges `patch` into the session's meta (a key set to undefined is removed). `keepUpdatedAt`: the session does not
   * move in the listing. `announce`: its summary is announced on both streams.
   */
  setMeta(
    id: string,
    patch: Partial<SessionRecord["meta"]>,
    opts?: { keepUpdatedAt?: boolean; announce?: boolean },
  ): Promise<SessionRecord | undefined>;
  /** Persists a change and announces the session's summary (the title a first message gives). */
  update(id: string, patch: SessionPatch): Promise<SessionRecord>;
  /** Marks the messages up to `uptoSeq` (all without it) as out of the model's context. */
  markOutOfContext(id: string, uptoSeq?: number): Promise<void>;
  /** A turn started or ended: the session's updatedAt moves and its summary, with this status, is announced. */
  statusChanged(id: string, status: SessionStatus): Promise<void>;
  /** Announces the session's summary as it is (its turn's first message moved it). */
  announce(rec: SessionRecord): void;
  /** The engine's pending decisions of a session changed: its summary's `waiting` is announced again. */
  decisionsChanged(id: string, waiting: SessionWaiting | undefined): void;
  /** A turn of the session runs: keep its record and context in memory until {@link release}. */
  hold(id: string, rec?: SessionRecord): void;
  release(id: string): void;
  /** Resolves once every event published so far is stored. */
  durable(): Promise<void>;
}

/** What the writer needs of the session layer besides the store: announcing summaries, the events' durability. */
export interface WriterSessionLayer {
  announce(rec: SessionRecord, status?: SessionStatus): void;
  decisionsChanged(id: string, waiting: SessionWaiting | undefined): void;
  durable(): Promise<void>;
}

interface Held {
  holds: number;
  rec?: SessionRecord;
  context?: StoredMessage[];
}

/** The session layer's {@link SessionWriter} over a store. */
export class SessionRecordWriter implements SessionWriter {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly store: SessionStore,
    private readonly layer: WriterSessionLayer,
  ) {}

  hold(id: string, rec?: SessionRecord): void {
    const h = this.held.get(id);
    if (h) h.holds++;
    else this.held.set(id, { holds: 1, rec });
  }

  release(id: string): void {
    const h = this.held.get(id);
    if (h && --h.holds === 0) this.held.delete(id);
  }

  async record(id: string): Promise<SessionRecord | undefined> {
    return this.held.get(id)?.rec ?? this.refresh(id);
  }

  async refresh(id: string): Promise<SessionRecord | undefined> {
    return this.keep(id, await this.store.getSession(id));
  }

  async context(id: string): Promise<StoredMessage[]> {
    const h = this.held.get(id);
    if (h?.context) return h.context.slice();
    const rows = await this.store.contextMessages(id);
    const now = this.held.get(id);
    if (now && !now.context) now.context = rows.slice();
    return rows;
  }

  async lastMessageSeq(id: string): Promise<number> {
    return (await this.store.historyPage(id, 1)).messages.at(-1)?.seq ?? 0;
  }

  async accepted(id: string, clientMessageId: string): Promise<boolean> {
    return this.store.hasClientMessageId(id, clientMessageId);
  }

  async appendMessage(id: string, msg: NewMessage): Promise<StoredMessage> {
    const stored = await this.store.appendMessage(id, msg);
    const h = this.held.get(id);
    if (h?.context && stored.inContext !== false) h.context.push(stored);
    return stored;
  }

  async addUsage(id: string, add: Partial<SessionUsage>): Promise<void> {
    const rec = await this.record(id);
    if (!rec) return;
    const usage = { ...rec.usage };
    for (const [k, v] of Object.entries(add) as [keyof SessionUsage, number | undefined][]) usage[k] += v ?? 0;
    this.keep(id, await this.store.updateSession(id, { usage }));
  }

  async setMeta(
    id: string,
    patch: Partial<SessionRecord["meta"]>,
    opts: { keepUpdatedAt?: boolean; announce?: boolean } = {},
  ): Promise<SessionRecord | undefined> {
    // Rule 4: merged into the meta as stored now, not the copy kept.
    const current = await this.store.getSession(id);
    if (!current) return undefined;
    const meta: Record<string, unknown> = { ...current.meta, ...patch };
    for (const [k, v] of Object.entries(patch)) if (v === undefined) delete meta[k];
    const rec = await this.store.updateSession(id, {
      meta,
      ...(opts.keepUpdatedAt ? { updatedAt: current.updatedAt } : {}),
    });
    this.keep(id, rec);
    if (rec && opts.announce) this.layer.announce(rec);
    return rec;
  }

  async update(id: string, patch: SessionPatch): Promise<SessionRecord> {
    const rec = this.keep(id, await this.store.updateSession(id, patch));
    if (!rec) throw ApiError.notFound(`Session not found: ${id}`, "session_not_found");
    this.layer.announce(rec);
    return rec;
  }

  async markOutOfContext(id: string, uptoSeq?: number): Promise<void> {
    await this.store.markOutOfContext(id, uptoSeq);
    const h = this.held.get(id);
    if (h?.context) h.context = uptoSeq === undefined ? [] : h.context.filter((m) => m.seq > uptoSeq);
  }

  async statusChanged(id: string, status: SessionStatus): Promise<void> {
    const rec = this.keep(id, await this.store.updateSession(id, {}));
    if (rec) this.layer.announce(rec, status);
  }

  announce(rec: SessionRecord): void {
    this.layer.announce(rec);
  }

  decisionsChanged(id: string, waiting: SessionWaiting | undefined): void {
    this.layer.decisionsChanged(id, waiting);
  }

  durable(): Promise<void> {
    return this.layer.durable();
  }

  /** A record read or written: the copy kept while the session is held. */
  private keep(id: string, rec: SessionRecord | undefined): SessionRecord | undefined {
    const h = this.held.get(id);
    if (h && rec) h.rec = rec;
    return rec;
  }
}
