import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { PoolClient } from "pg";
import {
  ApiError,
  type LeaseClaim,
  type OwnershipHandlers,
  type TeamDaemon,
  type TurnCommand,
  type TurnCommandResult,
  type TurnOwnership,
} from "../../core/index.js";
import { CommandQueue } from "./commands.js";
import { causeOf, connectionBroken, type SerialConnection } from "./connection.js";
import { EVENTS_CHANNEL } from "./shared-events.js";

export const DEFAULT_LEASE_TIMEOUT_MS = 15_000;

export interface OwnershipOptions {
  daemonId?: string;
  version?: string;
  leaseTimeoutMs?: number;
  /** The database's URL as it may be shown (password redacted). */
  name?: () => string;
  log?: (err: Error, what: string) => void;
}

const MS = "* interval '1 millisecond'";

/**
 * Takes the lease when it is free (no row, or released), or when it is this daemon's own: a lease whose release did
 * not reach the database (it was away when the turn ended); the caller runs no turn of the session. The fence only
 * grows.
 */
const CLAIM = `
  INSERT INTO turn_leases AS l (session_id, owner, fence, expires_at, after_seq, started_at)
  SELECT s.id, $2, 1, now() + $3 ${MS}, s.event_seq_reserved, now() FROM sessions s WHERE s.id = $1
  ON CONFLICT (session_id) DO UPDATE SET owner = EXCLUDED.owner, fence = l.fence + 1,
    expires_at = EXCLUDED.expires_at, after_seq = EXCLUDED.after_seq, started_at = EXCLUDED.started_at
  WHERE l.owner IS NULL OR l.owner = EXCLUDED.owner
  RETURNING fence`;

/** Leases of gone owners, each taken by exactly one daemon (row locks, SKIP LOCKED), with a new fence. */
const TAKE_ORPHANS = `
  WITH x AS (
    SELECT session_id, owner FROM turn_leases
    WHERE owner IS NOT NULL AND owner <> $1 AND expires_at < now()
    ORDER BY session_id FOR UPDATE SKIP LOCKED LIMIT 20
  )
  UPDATE turn_leases l SET owner = $1, fence = l.fence + 1, expires_at = now() + $2 ${MS}
  FROM x WHERE l.session_id = x.session_id
  RETURNING l.session_id, l.fence, l.after_seq, x.owner AS old_owner`;

/**
 * The PostgreSQL side of {@link TurnOwnership}: a heartbeat row per daemon, a lease row per running turn renewed
 * by one timer (every third of the lease timeout), which also takes over the leases of gone owners and the
 * commands nobody rang for. Its own connection, so a long store call never delays a renewal.
 */
export class PgTurnOwnership implements TurnOwnership {
  readonly daemonId: string;
  readonly leaseTimeoutMs: number;
  /**
   * Fences of the leases this daemon holds. A lost one stays until its turn has ended here and what it published
   * was written (refused), when the turn service releases it.
   */
  private readonly fences = new Map<string, { fence: number; lost: boolean }>();
  private remoteLeases = new Map<string, { owner: string; startedAt: number }>();
  private live: TeamDaemon[] = [];
  private handlers: OwnershipHandlers | undefined;
  private readonly commands: CommandQueue;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private refreshing: Promise<void> | undefined;
  private lastRenew = Date.now();
  /** A tick was asked for while one ran: the next one follows at once. */
  private soon = false;
  private closed = false;
  private readonly startedAt = new Date().toISOString();

  constructor(
    private readonly conn: Promise<SerialConnection>,
    private readonly opts: OwnershipOptions,
  ) {
    this.daemonId = opts.daemonId ?? randomUUID();
    this.leaseTimeoutMs = opts.leaseTimeoutMs ?? DEFAULT_LEASE_TIMEOUT_MS;
    this.commands = new CommandQueue(this.daemonId, this.leaseTimeoutMs, (fn) => this.run(fn));
    conn.then(
      () => this.schedule(0),
      () => {},
    );
  }

  async forget(gone: string): Promise<void> {
    if (gone === this.daemonId) return;
    await this.run(async (c) => {
      await c.query("UPDATE turn_leases SET expires_at = now() - interval '1 second' WHERE owner = $1", [gone]);
      await c.query("DELETE FROM team_daemons WHERE id = $1", [gone]);
    });
  }

  /** One call on the team's connection; a lost database is a clear 503 (as the store's own calls), never a 500. */
  private async run<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    try {
      return await (await this.conn).run(fn);
    } catch (err) {
      if (!connectionBroken(err)) throw err;
      throw new ApiError(503, `the database ${this.opts.name?.() ?? ""} is unavailable: ${causeOf(err)}`);
    }
  }

  serve(handlers: OwnershipHandlers): void {
    this.handlers = handlers;
    this.commands.serve(handlers.command);
    this.schedule(0);
  }

  /** The fence a write of the session must carry, when this daemon holds (or held and lost) its lease. */
  fenceOf(sessionId: string): number | undefined {
    return this.fences.get(sessionId)?.fence;
  }

  holds(sessionId: string): boolean {
    const f = this.fences.get(sessionId);
    return f !== undefined && !f.lost;
  }

  async claim(sessionId: string): Promise<LeaseClaim> {
    const held = this.fences.get(sessionId);
    if (held && !held.lost) return { ok: true, fence: held.fence };
    for (let attempt = 0; ; attempt++) {
      const res = await this.run(async (c) => {
        const got = await c.query<{ fence: number }>(CLAIM, [sessionId, this.daemonId, this.leaseTimeoutMs]);
        if (got.rows[0]) await c.query(`SELECT pg_notify('${EVENTS_CHANNEL}', 'l')`);
        const other = got.rows[0]
          ? undefined
          : await c.query<{ owner: string | null; expired: boolean }>(
              "SELECT owner, expires_at < now() AS expired FROM turn_leases WHERE session_id = $1",
              [sessionId],
            );
        return { fence: got.rows[0]?.fence, other: other?.rows[0] };
      });
      if (res.fence !== undefined) {
        this.fences.set(sessionId, { fence: res.fence, lost: false });
        this.remoteLeases.delete(sessionId);
        return { ok: true, fence: res.fence };
      }
      if (!res.other) throw ApiError.notFound(`Session not found: ${sessionId}`, "session_not_found");
      // Released between the two statements: ask again.
      if (res.other.owner === null && attempt < 3) continue;
      return { ok: false, owner: res.other.owner ?? "", expired: res.other.expired };
    }
  }

  async leaseOwner(sessionId: string, orLast = false): Promise<string | undefined> {
    const res = await this.run((c) =>
      c.query<{ owner: string | null; last: string | null }>(
        `SELECT CASE WHEN owner IS NOT NULL AND expires_at > now() THEN owner END AS owner,
          (SELECT d.id FROM team_daemons d WHERE d.id = l.last_owner AND d.heartbeat_at > now() - $2 ${MS}) AS last
        FROM turn_leases l WHERE session_id = $1`,
        [sessionId, this.leaseTimeoutMs],
      ),
    );
    const row = res.rows[0];
    return row?.owner ?? (orLast ? (row?.last ?? undefined) : undefined);
  }

  async release(sessionId: string): Promise<void> {
    const held = this.fences.get(sessionId);
    if (!held) return;
    this.fences.delete(sessionId);
    // A lost lease is not this daemon's to release; its fence was kept until the turn's last write was refused.
    if (held.lost) return;
    await this.run(async (c) => {
      await c.query(
        `UPDATE turn_leases SET owner = NULL, last_owner = owner, expires_at = now()
          WHERE session_id = $1 AND owner = $2 AND fence = $3`,
        [sessionId, this.daemonId, held.fence],
      );
      await c.query(`SELECT pg_notify('${EVENTS_CHANNEL}', 'l')`);
    });
  }

  remote(sessionId: string): { owner: string; startedAt: number } | undefined {
    return this.remoteLeases.get(sessionId);
  }

  remoteRunning(): string[] {
    return [...this.remoteLeases.keys()];
  }

  send(owner: string, cmd: TurnCommand, key?: string): Promise<TurnCommandResult> {
    return this.commands.send(owner, cmd, key);
  }

  daemons(): TeamDaemon[] {
    return this.live;
  }

  /** A doorbell payload that is not an event ring: a command, a result or a lease change (or `reconnected`). */
  ring(payload: string): void {
    if (payload === "l") void this.refresh();
    else if (payload === "reconnected") {
      void this.refresh();
      this.commands.ringAll();
    } else this.commands.ring(payload);
  }

  /** Re-reads the other daemons' live leases (coalesced). */
  private refresh(): Promise<void> {
    this.refreshing ??= this.run((c) =>
      c.query<{ session_id: string; owner: string; started: number }>(
        `SELECT session_id, owner, round(extract(epoch FROM started_at) * 1000)::float8 AS started FROM turn_leases
          WHERE owner IS NOT NULL AND owner <> $1 AND expires_at > now()`,
        [this.daemonId],
      ),
    )
      .then((res) => {
        this.remoteLeases = new Map(res.rows.map((r) => [r.session_id, { owner: r.owner, startedAt: r.started }]));
      })
      .catch((err: unknown) => this.opts.log?.(err as Error, "could not read the team's leases"))
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    if (this.ticking) {
      if (ms === 0) this.soon = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.ticking = this.tick().finally(() => {
        this.ticking = undefined;
        const next = this.soon ? 0 : Math.max(50, Math.floor(this.leaseTimeoutMs / 3));
        this.soon = false;
        this.schedule(next);
      });
    }, ms);
    this.timer.unref?.();
  }

  /** The heartbeat: this daemon's row, its leases renewed, the team read, then orphans and missed commands. */
  private async tick(): Promise<void> {
    try {
      const { renewed, daemons } = await this.run(async (c) => {
        await c.query(
          `INSERT INTO team_daemons (id, host, version, started_at, heartbeat_at) VALUES ($1, $2, $3, $4, now())
            ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`,
          [this.daemonId, hostname(), this.opts.version ?? "unknown", this.startedAt],
        );
        const renewed = await c.query<{ session_id: string; fence: number }>(
          `UPDATE turn_leases SET expires_at = now() + $2 ${MS} WHERE owner = $1 RETURNING session_id, fence`,
          [this.daemonId, this.leaseTimeoutMs],
        );
        const daemons = await c.query<{ id: string; host: string; version: string; at: Date }>(
          `SELECT id, host, version, heartbeat_at AS at FROM team_daemons
            WHERE heartbeat_at > now() - $1 ${MS} ORDER BY started_at, id`,
          [this.leaseTimeoutMs],
        );
        await c.query("DELETE FROM turn_commands WHERE created_at < now() - interval '1 hour'");
        return { renewed: renewed.rows, daemons: daemons.rows };
      });
      this.lastRenew = Date.now();
      this.live = daemons.map((d) => ({
        id: d.id,
        host: d.host,
        version: d.version,
        lastHeartbeat: d.at.toISOString(),
      }));
      const mine = new Map(renewed.map((r) => [r.session_id, r.fence]));
      for (const [id, f] of this.fences) if (!f.lost && mine.get(id) !== f.fence) this.lose(id);
    } catch (err) {
      this.opts.log?.(err as Error, "could not renew this daemon's leases");
      // Not renewed for a whole timeout: another daemon may have taken the turns over; they stop here.
      if (Date.now() - this.lastRenew > this.leaseTimeoutMs) for (const id of this.fences.keys()) this.lose(id);
      return;
    }
    await this.refresh();
    if (!this.handlers) return;
    await this.takeOrphans().catch((err: unknown) => this.opts.log?.(err as Error, "could not take over turns"));
    this.commands.ringAll();
  }

  private lose(sessionId: string): void {
    const f = this.fences.get(sessionId);
    if (!f || f.lost) return;
    f.lost = true;
    this.handlers?.lost(sessionId);
  }

  async sweep(): Promise<void> {
    if (this.handlers) await this.takeOrphans();
  }

  private async takeOrphans(): Promise<void> {
    const res = await this.run((c) =>
      c.query<{ session_id: string; fence: number; after_seq: number; old_owner: string }>(TAKE_ORPHANS, [
        this.daemonId,
        this.leaseTimeoutMs,
      ]),
    );
    for (const r of res.rows) {
      this.fences.set(r.session_id, { fence: r.fence, lost: false });
      this.remoteLeases.delete(r.session_id);
      await this.handlers?.orphaned({ sessionId: r.session_id, owner: r.old_owner, afterSeq: r.after_seq });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.ticking;
    this.commands.close();
    // A clean stop leaves the team at once (its leases were released by the turns' ends).
    await this.run((c) => c.query("DELETE FROM team_daemons WHERE id = $1", [this.daemonId])).catch(() => {});
  }
}
