import { mkdirSync, openSync } from "node:fs";
import { dirname, join } from "node:path";
import pino from "pino";
import type { Logger } from "../core/logger.js";
import { prettyStdout } from "./log-pretty.js";

/** Field paths that may carry secrets: censored wherever they appear in a log record. */
const REDACT = [
  "token",
  "apiKey",
  "password",
  "authorization",
  "cookie",
  "*.token",
  "*.apiKey",
  "*.password",
  "*.authorization",
  "*.cookie",
  "headers.authorization",
  "headers.cookie",
  "req.headers.authorization",
  "req.headers.cookie",
  "query.token",
  "req.query.token",
];

export interface LoggerOptions {
  home: string;
  level: string;
  /** Also log to stdout (foreground `agentd serve`). */
  terminal: boolean;
}

/**
 * The daemon's logger: `<home>/agentd.log` (and stdout in the foreground). The log file is opened synchronously,
 * here: pino's asynchronous open left a window (the whole boot, on a busy machine) in which the process could not
 * exit safely: its exit hook flushes synchronously and throws "sonic boom is not ready yet" while the open is still
 * pending, e.g. when a daemon is stopped right after starting and its home removed. With an open descriptor, a
 * flush at exit always works, even after the home has been deleted. Writes to the file are synchronous: the daemon
 * logs rarely (start, stop, plugin and connection changes), and a line written asynchronously could still be in
 * flight when `flush()` returns or the process is killed.
 */
export function createLogger(opts: LoggerOptions): { logger: Logger & pino.Logger; flush(): void } {
  const file = openLogFile(join(opts.home, "agentd.log"));
  const streams: pino.StreamEntry[] = file ? [{ stream: file, level: opts.level as pino.Level }] : [];
  if (opts.terminal) {
    // A person reads a terminal: readable lines there; a pipe (a supervisor, a log collector) gets the JSON.
    const stream = process.stdout.isTTY ? prettyStdout() : pino.destination({ dest: 1, sync: false });
    streams.push({ stream, level: opts.level as pino.Level });
  }
  const logger = pino(
    { level: opts.level, redact: { paths: REDACT, censor: "[redacted]" }, base: { pid: process.pid } },
    pino.multistream(streams),
  );
  return {
    logger,
    flush() {
      try {
        file?.flushSync();
      } catch {
        // a write error was already reported by the 'error' handler
      }
    },
  };
}

/** The log file as a synchronous pino destination on a descriptor opened now; undefined (with a warning) if it cannot be. */
function openLogFile(
  path: string,
): (pino.DestinationStream & { flushSync(): void; on: NodeJS.EventEmitter["on"] }) | undefined {
  let fd: number;
  try {
    mkdirSync(dirname(path), { recursive: true });
    fd = openSync(path, "a", 0o600);
  } catch (err) {
    process.stderr.write(`agentd: cannot open the log file ${path}: ${(err as Error).message}\n`);
    return undefined;
  }
  const file = pino.destination({ dest: fd, sync: true });
  // A write failure (disk full) must never crash the daemon.
  let warned = false;
  file.on("error", (err: Error) => {
    if (warned) return;
    warned = true;
    process.stderr.write(`agentd: cannot write the log file: ${err.message}\n`);
  });
  return file;
}
