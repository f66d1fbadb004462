/*
 * Runs ripgrep: always `spawn(rg, [...argv])`, never a shell. The user's ripgrep config file is not read
 * (--no-config), so only the flags given here apply. Paths arrive NUL-terminated and are passed on as they come;
 * the child is killed at once (SIGKILL) when the consumer stops early or the signal aborts.
 */
import { spawn } from "node:child_process";

/** Flags that make ripgrep list what the JavaScript walk lists (see ignore-rules.ts). */
export const LISTING_FLAGS = ["--no-config", "--hidden", "--no-require-git", "--no-messages", "-g", "!.git", "--null"];

export class RipgrepError extends Error {
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(message);
  }
}

const STDERR_MAX = 16 * 1024;

/**
 * Yields the NUL-terminated paths ripgrep prints in `cwd`, a batch per read. Exit 0 and 1 are success (1: nothing found); exit 2 with
 * output is partial success (an unreadable directory); exit 2 without any output throws RipgrepError (a pattern
 * ripgrep cannot parse, for one).
 */
export async function* ripgrepPaths(
  rg: string,
  cwd: string,
  args: string[],
  signal: AbortSignal,
): AsyncGenerator<string[]> {
  signal.throwIfAborted();
  const child = spawn(rg, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d: string) => {
    if (stderr.length < STDERR_MAX) stderr += d;
  });
  const exited = new Promise<number>((resolve) => {
    child.on("error", () => resolve(-1));
    child.on("close", (code) => resolve(code ?? -1));
  });
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  signal.addEventListener("abort", kill, { once: true });
  let yielded = 0;
  try {
    let rest: Buffer = Buffer.alloc(0);
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      signal.throwIfAborted();
      const buf = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
      const batch: string[] = [];
      let from = 0;
      for (let at = buf.indexOf(0); at !== -1; at = buf.indexOf(0, from)) {
        batch.push(buf.toString("utf8", from, at));
        from = at + 1;
      }
      rest = Buffer.from(buf.subarray(from));
      if (batch.length > 0) {
        yielded += batch.length;
        yield batch;
      }
    }
    const code = await exited;
    signal.throwIfAborted();
    if (code === -1 || (code === 2 && yielded === 0) || code > 2) {
      throw new RipgrepError(`ripgrep failed (exit ${code}): ${stderr.trim().split("\n")[0] ?? ""}`, stderr);
    }
  } finally {
    signal.removeEventListener("abort", kill);
    kill();
  }
}
