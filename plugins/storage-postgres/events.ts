import type { PoolClient } from "pg";
import type { EventBatch, EventToAppend, FeedEventToAppend, StoredEvent } from "../../core/index.js";
import { type Runner, text } from "./sql.js";

/** The `events` and `feed` tables, as the event log writes and reads them. */
export class PgEvents {
  constructor(
    private readonly run: Runner,
    private readonly tx: Runner,
  ) {}

  /** Duplicate seqs are ignored: a batch retried after a partial failure must not fail again. */
  async appendEvents(sessionId: string, events: EventToAppend[]): Promise<void> {
    if (events.length === 0) return;
    await this.run((c) => insertEvents(c, sessionId, events));
  }

  async readEvents(
    sessionId: string,
    afterSeq: number,
    limit: number,
    opts?: { durableOnly?: boolean },
  ): Promise<StoredEvent[]> {
    if (!(limit > 0)) return [];
    const durable = opts?.durableOnly ? "AND ephemeral = 0" : "";
    const res = await this.run((c) =>
      c.query<StoredEvent>(
        `SELECT seq, ts, type, json FROM events WHERE session_id = $1 AND seq > $2 ${durable} ORDER BY seq LIMIT $3`,
        [text(sessionId), afterSeq, Math.floor(limit)],
      ),
    );
    return res.rows;
  }

  /** 0 for an unknown session, like a session that has no events yet. */
  async eventSeqReserved(sessionId: string): Promise<number> {
    const res = await this.run((c) =>
      c.query<{ r: number }>("SELECT event_seq_reserved AS r FROM sessions WHERE id = $1", [text(sessionId)]),
    );
    return res.rows[0]?.r ?? 0;
  }

  /** A no-op for an unknown session (deleted while its log still held a reservation). */
  async reserveEventSeq(sessionId: string, upTo: number): Promise<void> {
    await this.run((c) =>
      c.query("UPDATE sessions SET event_seq_reserved = $1 WHERE id = $2", [upTo, text(sessionId)]),
    );
  }

  /* ---- feed ---- */

  async appendFeed(event: FeedEventToAppend): Promise<void> {
    await this.run((c) => insertFeed(c, [event]));
  }

  async readFeed(afterSeq: number, limit: number): Promise<StoredEvent[]> {
    if (!(limit > 0)) return [];
    const res = await this.run((c) =>
      c.query<StoredEvent>("SELECT seq, ts, type, json FROM feed WHERE seq > $1 ORDER BY seq LIMIT $2", [
        afterSeq,
        Math.floor(limit),
      ]),
    );
    return res.rows;
  }

  async feedSeq(): Promise<number> {
    const res = await this.run((c) => c.query<{ s: number | null }>("SELECT MAX(seq) AS s FROM feed"));
    return res.rows[0]?.s ?? 0;
  }

  /** The event log's flush: every session's pending events and the feed's, in one transaction. */
  async appendBatch(batch: EventBatch): Promise<void> {
    await this.tx(async (c) => {
      for (const s of batch.sessions) if (s.events.length > 0) await insertEvents(c, s.sessionId, s.events);
      if (batch.feed.length > 0) await insertFeed(c, batch.feed);
    });
  }
}

async function insertEvents(c: PoolClient, sessionId: string, events: EventToAppend[]): Promise<void> {
  await c.query(
    `INSERT INTO events (session_id, seq, ts, type, json, ephemeral)
      SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::int[])
    ON CONFLICT DO NOTHING`,
    [
      text(sessionId),
      events.map((e) => e.seq),
      events.map((e) => e.ts),
      events.map((e) => text(e.type)),
      events.map((e) => text(e.json)),
      events.map((e) => (e.ephemeral ? 1 : 0)),
    ],
  );
}

async function insertFeed(c: PoolClient, feed: FeedEventToAppend[]): Promise<void> {
  await c.query(
    `INSERT INTO feed (seq, ts, type, json)
      SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])
    ON CONFLICT DO NOTHING`,
    [feed.map((e) => e.seq), feed.map((e) => e.ts), feed.map((e) => text(e.type)), feed.map((e) => text(e.json))],
  );
}
