import { spawn } from "node:child_process";

/** Keeps the last `max` bytes written to it (the end of a command's output is where errors are). */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  dropped = 0;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size > this.max * 2) this.compact();
  }

  text(): string {
    this.compact();
    return Buffer.concat(this.chunks).toString("utf8");
  }

  private compact(): void {
    if (this.size <= this.max) return;
    const all = Buffer.concat(this.chunks);
    const cut = all.length - this.max;
    this.dropped += cut;
    this.chunks = [all.subarray(cut)];
    this.size = this.max;
  }
}

export interface RunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  droppedBytes: number;
  timedOut: boolean;
  aborted: boolean;
  /** Set when the process could not be started (e.g. ENOENT). */
  spawnError?: NodeJS.ErrnoException;
}

export interface RunOptions {
  timeoutMs: number;
  maxOutputBytes: number;
  signal: AbortSignal;
  env: NodeJS.ProcessEnv;
  /** Grace between SIGTERM and SIGKILL. */
  killGraceMs?: number;
}

/** Runs a binary with an argument array (never a shell), bounded in time and output, killed on abort. */
export function runProcess(binary: string, args: string[], opts: RunOptions): Promise<RunResult> {
  return new Promise((resolve) => {
    const stdout = new TailBuffer(opts.maxOutputBytes);
    const stderr = new TailBuffer(opts.maxOutputBytes);
    let timedOut = false;
    let aborted = false;
    let spawnError: NodeJS.ErrnoException | undefined;
    let killTimer: NodeJS.Timeout | undefined;

    const child = spawn(binary, args, {
      stdio: ["ignore", "pipe", "pipe"],
      env: opts.env,
      shell: false,
      detached: false,
    });
    const kill = () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      killTimer ??= setTimeout(() => child.kill("SIGKILL"), opts.killGraceMs ?? 2000);
      killTimer.unref();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, opts.timeoutMs);
    const onAbort = () => {
      aborted = true;
      kill();
    };
    if (opts.signal.aborted) onAbort();
    else opts.signal.addEventListener("abort", onAbort, { once: true });

    child.stdout.on("data", (d: Buffer) => stdout.push(d));
    child.stderr.on("data", (d: Buffer) => stderr.push(d));
    child.on("error", (err) => {
      spawnError = err as NodeJS.ErrnoException;
    });
    child.on("close", (code, sig) => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      opts.signal.removeEventListener("abort", onAbort);
      resolve({
        exitCode: code,
        signal: sig,
        stdout: stdout.text(),
        stderr: stderr.text(),
        droppedBytes: stdout.dropped + stderr.dropped,
        timedOut,
        aborted,
        spawnError,
      });
    });
  });
}
