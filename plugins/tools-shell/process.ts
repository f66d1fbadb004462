import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { setTimeout as delay } from "node:timers/promises";

export interface ShellExit {
  /** The exit code, or null when the shell was ended by a signal or never started. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the shell could not be started (missing directory, no /bin/bash). */
  spawnError?: Error;
  /** Processes the command left behind still held its output open; their later output was not captured. */
  outputAbandoned: boolean;
}

export interface ShellOptions {
  /** The program (`/bin/bash`, or bwrap wrapping it) and its arguments. */
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Time between SIGTERM and SIGKILL when the process tree is stopped. */
  killGraceMs: number;
}

/** How long output may keep flowing after the shell exited (children that inherited stdout) before we stop reading. */
const DRAIN_AFTER_EXIT_MS = 250;
const POLL_MS = 25;

/**
 * One `/bin/bash -c <command>` (inside the sandbox when there is one) in its own process group (detached), so the
 * whole tree it starts can be signalled at once; a sandbox ends with everything in it (`--die-with-parent` and its
 * own PID namespace). stdin is /dev/null, so nothing waits for input that will never come; stdout and stderr are merged in
 * arrival order.
 */
export class ShellProcess {
  readonly pid: number | undefined;
  /** Resolves once the shell exited and its output was drained (never rejects). */
  readonly done: Promise<ShellExit>;
  private readonly child: ChildProcess;
  private readonly listeners = new Set<(text: string) => void>();
  private stopping: Promise<void> | undefined;
  private exited = false;

  constructor(private readonly opts: ShellOptions) {
    this.child = spawn(opts.file, opts.args, {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.pid = this.child.pid;
    this.done = new Promise((resolve) => this.watch(resolve));
  }

  onOutput(listener: (text: string) => void): void {
    this.listeners.add(listener);
  }

  get running(): boolean {
    return !this.exited;
  }

  /** SIGTERM to the whole group, SIGKILL after the grace period; resolves when the group is gone (or given up on). */
  stop(): Promise<void> {
    this.stopping ??= this.pid === undefined ? Promise.resolve() : killProcessGroup(this.pid, this.opts.killGraceMs);
    return this.stopping;
  }

  private emit(text: string): void {
    if (!text) return;
    for (const l of this.listeners) l(text);
  }

  private watch(resolve: (exit: ShellExit) => void): void {
    const { stdout, stderr } = this.child;
    const decoders = [new StringDecoder("utf8"), new StringDecoder("utf8")];
    stdout?.on("data", (b: Buffer) => this.emit(decoders[0].write(b)));
    stderr?.on("data", (b: Buffer) => this.emit(decoders[1].write(b)));
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    const finish = (outputAbandoned: boolean, spawnError?: Error) => {
      if (settled) return;
      settled = true;
      this.exited = true;
      this.emit(decoders[0].end() + decoders[1].end());
      resolve({ code: exit?.code ?? null, signal: exit?.signal ?? null, outputAbandoned, spawnError });
    };
    this.child.once("error", (err) => {
      stdout?.destroy();
      stderr?.destroy();
      finish(false, err);
    });
    this.child.once("close", () => finish(false));
    this.child.once("exit", (code, signal) => {
      exit = { code, signal };
      this.exited = true;
      // A background child (`server &`) that inherited stdout keeps the pipe open after the shell exited:
      // stop reading so the call can end; the child gets EPIPE if it writes again.
      setTimeout(() => {
        if (settled) return;
        stdout?.destroy();
        stderr?.destroy();
        finish(true);
      }, DRAIN_AFTER_EXIT_MS).unref();
    });
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether any process of the group still runs. `kill(-pgid, 0)` also succeeds for zombies, which linger when the
 * init process is slow to reap orphans (containers), so on Linux the group's members are looked up in /proc.
 */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== "linux") return true;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    if (stat && stat.pgrp === pgid && stat.state !== "Z" && stat.state !== "X") return true;
  }
  return false;
}

/** State and process group of a process from /proc/<pid>/stat, or undefined when it is gone. */
export function readProcStat(pid: number): { state: string; pgrp: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces and parentheses: fields are counted from the last ")".
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0], pgrp: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

/** Terminates a process group: SIGTERM, then SIGKILL to whatever is left after `graceMs`. */
export async function killProcessGroup(pgid: number, graceMs: number): Promise<void> {
  if (!signalGroup(pgid, "SIGTERM")) return;
  for (let waited = 0; waited < graceMs; waited += POLL_MS) {
    await delay(POLL_MS);
    if (!groupAlive(pgid)) return;
  }
  signalGroup(pgid, "SIGKILL");
  for (let i = 0; i < 40 && groupAlive(pgid); i++) await delay(POLL_MS);
}
