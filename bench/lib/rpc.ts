import { parentPort, Worker, workerData } from "node:worker_threads";
import { clockOrigin, setClockOrigin } from "./clock.js";

/**
 * Request/reply over a worker thread, so the load's provider and clients run beside the daemon instead of on its
 * event loop (as separate processes would). Every worker shares the main thread's clock origin.
 */
type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

export class WorkerRpc {
  private readonly worker: Worker;
  private next = 0;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  constructor(file: URL) {
    this.worker = new Worker(file, { workerData: { origin: clockOrigin() } });
    this.worker.on("message", (m: Reply) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.ok) p?.resolve(m.result);
      else p?.reject(new Error(`${file.pathname.split("/").pop()}: ${m.error}`));
    });
    this.worker.on("error", (err) => {
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    });
  }

  call<T>(op: string, args: unknown = {}): Promise<T> {
    const id = ++this.next;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, op, args });
    });
  }

  async terminate(): Promise<void> {
    await this.worker.terminate();
  }
}

/** The worker side: runs `handlers[op](args)` for each request. */
// biome-ignore lint/suspicious/noExplicitAny: each handler declares its own argument shape
export function serveRpc(handlers: Record<string, (args: any) => Promise<unknown> | unknown>): void {
  const port = parentPort;
  if (!port) throw new Error("this module must run as a worker thread");
  setClockOrigin((workerData as { origin: string }).origin);
  port.on("message", (m: { id: number; op: string; args: unknown }) => {
    const handler = handlers[m.op];
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown op ${m.op}`);
        return handler(m.args);
      })
      .then(
        (result) => port.postMessage({ id: m.id, ok: true, result }),
        (err: Error) => port.postMessage({ id: m.id, ok: false, error: err.stack ?? String(err) }),
      );
  });
}
