import type Database from "better-sqlite3";
import type { EventToAppend, NewMessage, SessionRecord, StoredMessage } from "../../core/index.js";
import { ApiError } from "../../core/index.js";
import { messageFromRow, messageToParams, sessionFromRow, sessionToParams } from "./rows.js";
import { EVENT_ROWS, type Statements } from "./statements.js";

export type SessionPatch = Partial<Omit<SessionRecord, "id" | "createdAt">>;

/**
 * The store's writes that touch more than one row, each one transaction, so a crash never leaves a message without
 * its session counters (or the FTS index out of step).
 */
export interface StoreTransactions {
  append(sessionId: string, msg: NewMessage): StoredMessage;
  update(id: string, patch: SessionPatch): SessionRecord | undefined;
  remove(id: string): boolean;
  truncate(id: string, fromSeq: number): void;
  appendEvents(id: string, events: EventToAppend[]): void;
}

export function prepareTransactions(db: Database.Database, q: Statements): StoreTransactions {
  const append = db.transaction((sessionId: string, msg: NewMessage): StoredMessage => {
    const cur = q.msgSeq.get(sessionId);
    if (!cur) throw ApiError.notFound(`Session not found: ${sessionId}`);
    const seq = cur.msg_seq + 1;
    const now = new Date().toISOString();
    const params = messageToParams(sessionId, seq, msg.createdAt ?? now, msg);
    q.insertMessage.run(params);
    q.afterAppend.run(seq, params.counts, now, sessionId);
    return messageFromRow(params);
  });

  const update = db.transaction((id: string, patch: SessionPatch): SessionRecord | undefined => {
    const row = q.getSession.get(id);
    if (!row) return undefined;
    const next: SessionRecord = { ...sessionFromRow(row), ...patch, id };
    if (patch.updatedAt === undefined) next.updatedAt = new Date().toISOString();
    q.updateSession.run(sessionToParams(next));
    return next;
  });

  const remove = db.transaction((id: string): boolean => {
    // Messages go row by row through the FTS delete trigger; events and the session follow.
    q.deleteMessages.run(id);
    q.deleteEvents.run(id);
    return q.deleteSession.run(id).changes > 0;
  });

  const truncate = db.transaction((id: string, fromSeq: number) => {
    q.truncate.run(id, fromSeq);
    q.recount.run(id);
  });

  // Deltas arrive in batches of hundreds: rows go in EVENT_ROWS at a time (one statement step instead of many).
  const params = new Array<unknown>(EVENT_ROWS * 6);
  const appendEvents = db.transaction((id: string, events: EventToAppend[]) => {
    let i = 0;
    for (; i + EVENT_ROWS <= events.length; i += EVENT_ROWS) {
      for (let j = 0; j < EVENT_ROWS; j++) {
        const e = events[i + j] as EventToAppend;
        const o = j * 6;
        params[o] = id;
        params[o + 1] = e.seq;
        params[o + 2] = e.ts;
        params[o + 3] = e.type;
        params[o + 4] = e.json;
        params[o + 5] = e.ephemeral ? 1 : 0;
      }
      q.insertEvents.run(params);
    }
    for (; i < events.length; i++) {
      const e = events[i] as EventToAppend;
      q.insertEvent.run(id, e.seq, e.ts, e.type, e.json, e.ephemeral ? 1 : 0);
    }
  });

  return { append, update, remove, truncate, appendEvents };
}
