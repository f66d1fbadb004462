import { join } from "node:path";
import pino from "pino";
import type { Logger } from "../core/logger.js";

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
];

export interface LoggerOptions {
  home: string;
  level: string;
  /** Also log to stdout (foreground `agentd serve`). */
  terminal: boolean;
}

export function createLogger(opts: LoggerOptions): { logger: Logger & pino.Logger; flush(): void } {
  const file = pino.destination({ dest: join(opts.home, "agentd.log"), mkdir: true, sync: false });
  // The file opens asynchronously; a failure (home removed, disk full) must never crash the daemon.
  let warned = false;
  file.on("error", (err: Error) => {
    if (warned) return;
    warned = true;
    process.stderr.write(`agentd: cannot write the log file: ${err.message}\n`);
  });
  const streams: pino.StreamEntry[] = [{ stream: file, level: opts.level as pino.Level }];
  if (opts.terminal) streams.push({ stream: pino.destination({ dest: 1, sync: false }), level: opts.level as pino.Level });
  const logger = pino(
    { level: opts.level, redact: { paths: REDACT, censor: "[redacted]" }, base: { pid: process.pid } },
    pino.multistream(streams),
  );
  return {
    logger,
    flush() {
      try {
        file.flushSync();
      } catch {
        // not yet open: nothing to flush
      }
    },
  };
}
