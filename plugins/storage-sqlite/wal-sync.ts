import { closeSync, constants, fdatasync, fsync, openSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Makes committed writes durable against power loss, off the event loop. The database runs in WAL mode with
 * `synchronous = NORMAL`: a commit is in the operating system's cache when it returns, which survives the process
 * dying (SIGKILL) but not the machine; SQLite syncs the WAL only before a checkpoint. `synchronous = FULL` would sync
 * it on every commit, but synchronously, blocking every session's token stream for each one (2-17 ms on a loaded
 * disk), and on every event batch too.
 *
 * Instead, a write that something will be announced about (a message) asks for a sync: an `fdatasync` of the WAL on
 * libuv's thread pool. One sync serves every commit made before it started (group commit): a caller that arrives
 * while one runs waits for the next, which all such callers share. A WAL frame is valid only with its commit frame
 * and checksums, so a synced WAL holds the commit across a power loss; a checkpoint syncs the WAL and the database
 * itself before the WAL is reused.
 */
export class WalSync {
  private fd: number | undefined;
  /** The sync running now; covers commits made before it started. */
  private running: Promise<void> | undefined;
  /** The next sync, shared by every caller that arrived while one ran. */
  private next: Promise<void> | undefined;
  private closed = false;

  /** `file`: the database file; its WAL is `<file>-wal`. */
  constructor(private readonly file: string) {}

  /** Resolves once every commit made before the call is on disk. */
  sync(): Promise<void> {
    if (this.next) return this.next;
    if (!this.running) return this.start();
    const after = () => {
      this.next = undefined;
      return this.start();
    };
    this.next = this.running.then(after, after);
    return this.next;
  }

  private start(): Promise<void> {
    const p = this.syncOnce().finally(() => {
      if (this.running === p) this.running = undefined;
      if (this.closed && !this.running && !this.next) this.release();
    });
    this.running = p;
    return p;
  }

  private async syncOnce(): Promise<void> {
    if (this.closed) return;
    if (this.fd === undefined) {
      // The WAL exists once the first commit is made. Its directory entry is synced once, so the file itself is
      // found after a power loss.
      this.fd = openSync(`${this.file}-wal`, constants.O_RDONLY);
      const dir = openSync(dirname(this.file), constants.O_RDONLY);
      try {
        await new Promise<void>((resolve, reject) => fsync(dir, (err) => (err ? reject(err) : resolve())));
      } finally {
        closeSync(dir);
      }
    }
    const fd = this.fd;
    await new Promise<void>((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
  }

  /** Stops syncing; the descriptor is closed once no sync uses it. */
  close(): void {
    this.closed = true;
    if (!this.running && !this.next) this.release();
  }

  private release(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // already gone
    }
    this.fd = undefined;
  }
}
