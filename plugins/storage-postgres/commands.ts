import { randomUUID } from "node:crypto";
import type { PoolClient } from "pg";
import { ApiError, isApiError, type TurnCommand, type TurnCommandResult } from "../../core/index.js";
import { EVENTS_CHANNEL } from "./shared-events.js";

/** How long the owner has to answer a command it took (an abort waits for the turn's end). */
const ANSWER_TIMEOUT_MS = 60_000;
/** How often a sender looks at its command's row when no doorbell rang (a ring may be lost). */
const POLL_MS = 250;

/** A sender waiting for its command's result. */
interface Waiter {
  check: () => void;
}

/**
 * The commands table: a sender inserts a row for the owner (once per idempotency key) and rings `c <owner>`; the
 * owner takes its open rows with `FOR UPDATE SKIP LOCKED` (each exactly once, even with two claimers), carries them
 * out in order and writes each result, ringing `r <id>`. The sender resolves with the result; a command the owner
 * did not take within the lease timeout is withdrawn and answered 503.
 */
export class CommandQueue {
  private execute: ((cmd: TurnCommand) => Promise<TurnCommandResult>) | undefined;
  private readonly waiters = new Map<number, Set<Waiter>>();
  private claiming: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(
    private readonly daemonId: string,
    private readonly claimTimeoutMs: number,
    private readonly run: <T>(fn: (c: PoolClient) => Promise<T>) => Promise<T>,
  ) {}

  serve(execute: (cmd: TurnCommand) => Promise<TurnCommandResult>): void {
    this.execute = execute;
  }

  async send(owner: string, cmd: TurnCommand, key?: string): Promise<TurnCommandResult> {
    const idem = key ?? randomUUID();
    const id = await this.run(async (c) => {
      const res = await c.query<{ id: number }>(
        `WITH ins AS (
          INSERT INTO turn_commands (idem_key, target, session_id, kind, payload) VALUES ($1, $2, $3, $4, $5)
          ON CONFLICT (idem_key) DO NOTHING RETURNING id
        ) SELECT id FROM ins UNION ALL SELECT id FROM turn_commands WHERE idem_key = $1 LIMIT 1`,
        [idem, owner, cmd.sessionId, cmd.kind, JSON.stringify(cmd.payload ?? null)],
      );
      await c.query("SELECT pg_notify($1, $2)", [EVENTS_CHANNEL, `c ${owner}`]);
      return res.rows[0]?.id as number;
    });
    const claimBy = Date.now() + this.claimTimeoutMs;
    const answerBy = claimBy + ANSWER_TIMEOUT_MS;
    for (;;) {
      const row = await this.run((c) =>
        c.query<{ claimed: boolean; result: string | null }>(
          "SELECT claimed_at IS NOT NULL AS claimed, result FROM turn_commands WHERE id = $1",
          [id],
        ),
      ).then((r) => r.rows[0]);
      if (row?.result) return JSON.parse(row.result) as TurnCommandResult;
      if (!row?.claimed && Date.now() > claimBy) {
        const gone = await this.run((c) =>
          c.query("DELETE FROM turn_commands WHERE id = $1 AND claimed_at IS NULL", [id]),
        );
        if ((gone.rowCount ?? 0) > 0 || !row) {
          throw new ApiError(
            503,
            `The daemon that runs this session's turn (${owner}) did not take the request within ` +
              `${Math.round(this.claimTimeoutMs / 1000)} s; try again`,
          );
        }
        continue;
      }
      if (Date.now() > answerBy) {
        throw new ApiError(
          503,
          `The daemon that runs this session's turn (${owner}) took the request but did not answer`,
        );
      }
      await this.wait(id);
    }
  }

  /** Until the result's doorbell rings, or a poll's pause. */
  private wait(id: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const set = this.waiters.get(id) ?? new Set<Waiter>();
      this.waiters.set(id, set);
      const w: Waiter = {
        check: () => {
          clearTimeout(timer);
          set.delete(w);
          if (set.size === 0 && this.waiters.get(id) === set) this.waiters.delete(id);
          resolve();
        },
      };
      const timer = setTimeout(w.check, POLL_MS);
      set.add(w);
    });
  }

  /** A doorbell payload: `c <daemon>` (commands for it) or `r <id>` (a result). */
  ring(payload: string): void {
    if (payload === `c ${this.daemonId}`) this.claim();
    const m = /^r (\d{1,15})$/.exec(payload);
    if (m) for (const w of [...(this.waiters.get(Number(m[1])) ?? [])]) w.check();
  }

  /** Looks for open commands and wakes every sender (a reconnected listener, the heartbeat). */
  ringAll(): void {
    this.claim();
  }

  /** Takes this daemon's open commands and carries them out in order, while any are left. */
  private claim(): void {
    if (!this.execute || this.closed) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = this.claimOnce()
      .catch(() => {})
      .finally(() => {
        this.claiming = undefined;
        if (this.again) {
          this.again = false;
          this.claim();
        }
      });
  }

  private async claimOnce(): Promise<void> {
    const execute = this.execute;
    if (!execute) return;
    const res = await this.run((c) =>
      c.query<{ id: number; session_id: string; kind: string; payload: string }>(
        `UPDATE turn_commands SET claimed_at = now() WHERE id IN (
          SELECT id FROM turn_commands WHERE target = $1 AND claimed_at IS NULL
          ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 50
        ) RETURNING id, session_id, kind, payload`,
        [this.daemonId],
      ),
    );
    // In order within a session; sessions side by side (an abort that waits for its turn's end holds no other).
    const bySession = new Map<string, typeof res.rows>();
    for (const r of res.rows.sort((x, y) => x.id - y.id)) {
      const list = bySession.get(r.session_id) ?? [];
      list.push(r);
      bySession.set(r.session_id, list);
    }
    await Promise.all([...bySession.values()].map((list) => this.carryOut(execute, list)));
    if (res.rows.length === 50) this.again = true;
  }

  private async carryOut(
    execute: (cmd: TurnCommand) => Promise<TurnCommandResult>,
    rows: Array<{ id: number; session_id: string; kind: string; payload: string }>,
  ): Promise<void> {
    for (const r of rows) {
      let result: TurnCommandResult;
      try {
        result = await execute({ sessionId: r.session_id, kind: r.kind, payload: JSON.parse(r.payload) });
      } catch (err) {
        result = { status: 500, body: { error: "Internal error", code: "internal_error" } };
        if (isApiError(err)) {
          result = { status: err.status, body: { ...err.extra, error: err.message, code: err.code } };
        }
      }
      await this.run(async (c) => {
        await c.query("UPDATE turn_commands SET result = $2, done_at = now() WHERE id = $1", [
          r.id,
          JSON.stringify(result),
        ]);
        await c.query("SELECT pg_notify($1, $2)", [EVENTS_CHANNEL, `r ${r.id}`]);
      });
    }
  }

  close(): void {
    this.closed = true;
    for (const set of this.waiters.values()) for (const w of [...set]) w.check();
  }
}
