import type { Client } from "pg";
import { causeOf } from "./connection.js";

/** Waits between attempts to listen again after the listening connection was lost (doubling up to the last). */
const RETRY_MS = [100, 200, 500, 1000, 2000, 5000];

/** What the store lends the doorbell: new unpooled clients, its redacted URL, and where to report a lost listener. */
export interface DoorbellHost {
  /** A new, unpooled client on the store's database (not connected). */
  client(): Promise<Client>;
  /** The database's URL as it may be shown (password redacted). */
  name(): string;
  onListenError(err: Error): void;
}

/** One subscriber: a channel's payloads, and `reconnected` after the connection was lost (anything may be missed). */
export interface Ring {
  channel: string;
  payload(text: string | undefined): void;
  reconnected(): void;
}

/**
 * The daemon's one dedicated, unpooled connection that LISTENs, shared by every subscriber (the event log, the
 * documents). It connects on the first subscription; when it is lost (the server restarted, the network went away)
 * it connects again with a growing pause, listens to every subscribed channel again and tells each subscriber it
 * was away: whatever was committed in between is read from the tables, not awaited as a notification.
 */
export class Doorbell {
  private readonly rings = new Set<Ring>();
  private client: Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The subscribers' LISTENs, one after the other (a connection runs one query at a time). */
  private listens: Promise<unknown> = Promise.resolve();

  constructor(private readonly host: DoorbellHost) {}

  /** Adds a subscriber; resolves once its channel is listened to. */
  async subscribe(ring: Ring): Promise<void> {
    this.rings.add(ring);
    this.connecting ??= this.connect(false).catch((err: unknown) => {
      this.connecting = undefined; // the next subscriber tries again
      throw err;
    });
    try {
      await this.connecting;
    } catch (err) {
      this.rings.delete(ring);
      throw err;
    }
    const client = this.client;
    if (!client || this.closed) return;
    const listened = this.listens.then(() => client.query(`LISTEN ${ring.channel}`));
    this.listens = listened.catch(() => {});
    await listened;
  }

  unsubscribe(ring: Ring): void {
    this.rings.delete(ring);
  }

  private channels(): string[] {
    return [...new Set([...this.rings].map((r) => r.channel))];
  }

  private async connect(again: boolean): Promise<void> {
    const client = await this.host.client();
    client.on("notification", (n) => {
      for (const r of this.rings) if (r.channel === n.channel) r.payload(n.payload);
    });
    client.on("error", (err) => this.lost(client, err));
    client.on("end", () => this.lost(client, new Error("the listening connection ended")));
    try {
      await client.connect();
      for (const channel of this.channels()) await client.query(`LISTEN ${channel}`);
    } catch (err) {
      client.removeAllListeners("end");
      client.on("error", () => {});
      await client.end().catch(() => {});
      throw new Error(`cannot listen on the database ${this.host.name()}: ${causeOf(err)}`);
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.attempt = 0;
    if (again) for (const r of this.rings) r.reconnected();
  }

  private lost(client: Client, err: Error): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    client.on("error", () => {});
    client.end().catch(() => {});
    this.host.onListenError(err);
    this.retry();
  }

  private retry(): void {
    if (this.closed || this.timer) return;
    const wait = RETRY_MS[Math.min(this.attempt++, RETRY_MS.length - 1)] ?? 5000;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.connect(true).catch((err: unknown) => {
        this.host.onListenError(err instanceof Error ? err : new Error(String(err)));
        this.retry();
      });
    }, wait);
    this.timer.unref?.();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.connecting?.catch(() => {});
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners("end");
      await client.end().catch(() => {});
    }
  }
}
