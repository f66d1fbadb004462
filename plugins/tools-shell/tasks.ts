import { UnreadQueue } from "./output.js";
import { ShellProcess } from "./process.js";

export type TaskStatus = "running" | "exited" | "killed";

export interface TaskLimits {
  /** Running tasks per session. */
  maxPerSession: number;
  /** Unread output kept per task (characters). */
  bufferChars: number;
  /** Finished tasks remembered per session (for their exit code and last output). */
  keepFinished: number;
  killGraceMs: number;
}

export class BackgroundTask {
  status: TaskStatus = "running";
  exitCode: number | null = null;
  signal: NodeJS.Signals | null = null;
  spawnError: Error | undefined;
  readonly startedAt = Date.now();
  finishedAt: number | undefined;
  readonly ended: Promise<void>;
  private readonly unread: UnreadQueue;
  private readonly waiters = new Set<() => void>();
  private lifetime: NodeJS.Timeout | undefined;

  constructor(
    readonly id: string,
    readonly sessionId: string,
    readonly command: string,
    readonly proc: ShellProcess,
    bufferChars: number,
  ) {
    this.unread = new UnreadQueue(bufferChars);
    proc.onOutput((text) => {
      this.unread.push(text);
      this.wake();
    });
    this.ended = proc.done.then((exit) => {
      clearTimeout(this.lifetime);
      if (this.status === "running") this.status = "exited";
      this.exitCode = exit.code;
      this.signal = exit.signal;
      this.spawnError = exit.spawnError;
      this.finishedAt = Date.now();
      this.wake();
    });
  }

  /** Stops the task after `ms` (an explicit timeout given for a background command). */
  limitLifetime(ms: number, stop: () => void): void {
    this.lifetime = setTimeout(stop, ms);
    this.lifetime.unref();
  }

  read(): { text: string; dropped: number } {
    return this.unread.take();
  }

  get hasUnread(): boolean {
    return this.unread.pending > 0;
  }

  /** Resolves on new output, on the end of the task, after `ms`, or on abort, whichever comes first. */
  waitForChange(ms: number, signal: AbortSignal): Promise<void> {
    if (this.hasUnread || this.status !== "running" || ms <= 0 || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
      this.waiters.add(done);
    });
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }
}

/** Background shell tasks, per session, bounded in number and in buffered output. */
export class BackgroundTasks {
  private readonly tasks = new Map<string, BackgroundTask>();
  private readonly pendingKills = new Set<Promise<void>>();
  private next = 1;

  constructor(private readonly limits: TaskLimits) {}

  runningCount(sessionId: string): number {
    return this.list(sessionId).filter((t) => t.status === "running").length;
  }

  list(sessionId: string): BackgroundTask[] {
    return [...this.tasks.values()].filter((t) => t.sessionId === sessionId);
  }

  get(sessionId: string, id: string): BackgroundTask | undefined {
    const t = this.tasks.get(id);
    return t && t.sessionId === sessionId ? t : undefined;
  }

  /** Starts a task, or returns undefined when the session already runs its maximum. */
  start(
    sessionId: string,
    command: string,
    cwd: string,
    launch: { file: string; args: string[]; env: NodeJS.ProcessEnv },
  ): BackgroundTask | undefined {
    if (this.runningCount(sessionId) >= this.limits.maxPerSession) return undefined;
    const proc = new ShellProcess({ ...launch, cwd, killGraceMs: this.limits.killGraceMs });
    const task = new BackgroundTask(`bg-${this.next++}`, sessionId, command, proc, this.limits.bufferChars);
    this.tasks.set(task.id, task);
    void task.ended.then(() => this.prune(sessionId));
    return task;
  }

  /**
   * Kills a running task's whole process tree; resolves when it is gone. A finished task is left alone: its
   * process group id may already belong to someone else.
   */
  async kill(task: BackgroundTask): Promise<void> {
    if (task.status !== "running") return;
    task.status = "killed";
    await task.proc.stop();
    await task.ended;
  }

  /** Forgets the session's tasks at once and kills those still running. */
  killSession(sessionId: string): Promise<void> {
    const tasks = this.list(sessionId);
    for (const t of tasks) this.tasks.delete(t.id);
    return this.track(Promise.all(tasks.map((t) => this.kill(t))));
  }

  /** Kills every task, including kills still in progress from `killSession`. */
  async killAll(): Promise<void> {
    const tasks = [...this.tasks.values()];
    this.tasks.clear();
    await Promise.all([...tasks.map((t) => this.kill(t)), ...this.pendingKills]);
  }

  private track(p: Promise<unknown>): Promise<void> {
    const done = p.then(() => {
      this.pendingKills.delete(done);
    });
    this.pendingKills.add(done);
    return done;
  }

  private prune(sessionId: string): void {
    const finished = this.list(sessionId)
      .filter((t) => t.status !== "running")
      .sort((a, b) => (a.finishedAt ?? 0) - (b.finishedAt ?? 0));
    for (const t of finished.slice(0, Math.max(0, finished.length - this.limits.keepFinished))) this.tasks.delete(t.id);
  }
}
