import type { PoolClient } from "pg";
import type { EventListener, EventRing, SharedEvents, UnnumberedEvent } from "../../core/index.js";
import type { Doorbell, Ring } from "./doorbell.js";

/** The doorbell's channel: `s <lastSeq> <sessionId>` after a session's append, `f <lastSeq>` after the feed's. */
export const EVENTS_CHANNEL = "agentd_events";

/**
 * One statement (its own transaction): the session row's counter is bumped under the row's lock, the events get
 * the numbers after the old value, and the doorbell rings at commit. No row (the session is gone, or $8 is the
 * fence of a turn lease this daemon lost): nothing.
 */
const APPEND_SESSION = `
  WITH s AS (
    UPDATE sessions SET event_seq_reserved = event_seq_reserved + $2
    WHERE id = $1 AND ($8::bigint IS NULL OR EXISTS (SELECT 1 FROM turn_leases l WHERE l.session_id = $1 AND l.fence = $8))
    RETURNING event_seq_reserved - $2 AS base, event_seq_reserved AS last
  ), ins AS (
    INSERT INTO events (session_id, seq, ts, type, json, ephemeral)
    SELECT $1, s.base + e.n, e.ts, e.type, e.head || (s.base + e.n) || e.tail, e.eph
    FROM s, unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::int[])
      WITH ORDINALITY AS e(ts, type, head, tail, eph, n)
  )
  SELECT s.base, pg_notify('${EVENTS_CHANNEL}', 's ' || s.last || ' ' || $1) FROM s`;

/** The feed's counterpart: one counter row for every daemon's lifecycle events. */
const APPEND_FEED = `
  WITH c AS (
    UPDATE feed_counter SET last_seq = last_seq + $1 WHERE id = 1
    RETURNING last_seq - $1 AS base, last_seq AS last
  ), ins AS (
    INSERT INTO feed (seq, ts, type, json)
    SELECT c.base + e.n, e.ts, e.type, e.head || (c.base + e.n) || e.tail
    FROM c, unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS e(ts, type, head, tail, n)
  )
  SELECT c.base, pg_notify('${EVENTS_CHANNEL}', 'f ' || c.last) FROM c`;

/** What the store lends: its serial connection and the daemon's listening connection. */
export interface SharedEventsHost {
  run<T>(fn: (c: PoolClient) => Promise<T>): Promise<T>;
  doorbell: Doorbell;
  /** The fence this daemon's writes of the session carry (it holds, or lost, the session's turn lease). */
  fenceOf(sessionId: string): number | undefined;
  /** A doorbell payload that is no event ring (the team's commands and leases), or `reconnected`. */
  onOther(payload: string): void;
}

/** Numbering appends and the LISTEN/NOTIFY doorbell of the PostgreSQL store. */
export class PgSharedEvents implements SharedEvents {
  constructor(
    private readonly host: SharedEventsHost,
    private readonly clean: <V>(v: V) => V,
  ) {}

  async append(sessionId: string | null, events: UnnumberedEvent[]): Promise<number | undefined> {
    if (events.length === 0) return undefined;
    const cols = [
      events.map((e) => e.ts),
      events.map((e) => this.clean(e.type)),
      events.map((e) => this.clean(e.head)),
      events.map((e) => this.clean(e.tail)),
    ];
    const res = await this.host.run((c) =>
      sessionId === null
        ? c.query<{ base: number }>(APPEND_FEED, [events.length, ...cols])
        : c.query<{ base: number }>(APPEND_SESSION, [
            this.clean(sessionId),
            events.length,
            ...cols,
            events.map((e) => (e.ephemeral ? 1 : 0)),
            this.host.fenceOf(sessionId) ?? null,
          ]),
    );
    const base = res.rows[0]?.base;
    return base === undefined ? undefined : base + 1;
  }

  listen(ring: (r: EventRing) => void): EventListener {
    const sub: Ring = {
      channel: EVENTS_CHANNEL,
      payload: (text) => {
        const r = parseRing(text);
        if (r) ring(r);
        else if (text) this.host.onOther(text);
      },
      reconnected: () => {
        ring({ kind: "reconnected" });
        this.host.onOther("reconnected");
      },
    };
    const doorbell = this.host.doorbell;
    return { ready: doorbell.subscribe(sub), close: async () => doorbell.unsubscribe(sub) };
  }
}

/** Parses a notification's payload; anything else on the channel is ignored. */
export function parseRing(payload: string | undefined): EventRing | undefined {
  const m = /^(s|f) (\d{1,15})(?: (.+))?$/.exec(payload ?? "");
  if (!m) return undefined;
  const lastSeq = Number(m[2]);
  if (m[1] === "f") return { kind: "feed", lastSeq };
  return m[3] ? { kind: "session", sessionId: m[3], lastSeq } : undefined;
}
