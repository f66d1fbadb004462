import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The `agentd` command as installed (package.json "bin"). */
const MAIN = fileURLToPath(new URL("../../host/agentd.cjs", import.meta.url));

export interface CliRun {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (a signal counts as 128 + its number). */
  exited: Promise<number>;
  /** Waits until stdout or stderr satisfies `test` (polled on every chunk), or rejects after `timeoutMs`. */
  waitFor(test: (out: string, err: string) => boolean, timeoutMs?: number): Promise<void>;
}

/** Environment without the outer AGENTD_* / OPENAI_* variables, so a client only knows the home it is given. */
export function clientEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith("AGENTD_") && !k.startsWith("OPENAI_")) env[k] = v;
  }
  return { ...env, AGENTD_LOG_LEVEL: "warn", ...extra };
}

/** Runs `agentd --home HOME ...args` as a child process; `stdin` is written then closed (ignored when absent). */
export function agentd(home: string, args: string[], opts: { stdin?: string; cwd?: string } = {}): CliRun {
  const child = spawn(process.execPath, [MAIN, "--home", home, ...args], {
    env: clientEnv(),
    cwd: opts.cwd,
    stdio: [opts.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const l of listeners) l();
  };
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
    changed();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
    changed();
  });
  if (opts.stdin !== undefined) child.stdin?.end(opts.stdin);
  const exited = new Promise<number>((resolve) => {
    child.once("exit", (code, signal) => {
      changed();
      resolve(code ?? (signal === "SIGINT" ? 130 : 128 + 9));
    });
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(test, timeoutMs = 15_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (test(out, err)) {
            cleanup();
            resolve();
          } else if (child.exitCode !== null) {
            cleanup();
            reject(new Error(`agentd exited (${child.exitCode}) first; stdout: ${out}\nstderr: ${err}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out; stdout: ${out}\nstderr: ${err}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
  };
}
