/**
 * The foreground daemon's log on a terminal: one readable line per record (`12:04:05 INFO  agentd listening
 * url=http://…`) instead of pino's JSON with epoch-ms times. Files and pipes keep the JSON.
 */
const LEVELS: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };
const HIDDEN = new Set(["level", "time", "msg", "pid", "hostname"]);

function value(v: unknown): string {
  if (typeof v === "string") return /\s/.test(v) ? JSON.stringify(v) : v;
  if (v && typeof v === "object" && "message" in v && typeof (v as { message: unknown }).message === "string")
    return JSON.stringify((v as { message: string }).message);
  return JSON.stringify(v);
}

/** One JSON record as a line; anything that is not a record is passed through unchanged. */
export function prettyLogLine(line: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = typeof rec.time === "number" ? new Date(rec.time).toTimeString().slice(0, 8) : "";
  const level = (LEVELS[rec.level as number] ?? String(rec.level)).padEnd(5);
  const fields = Object.entries(rec)
    .filter(([k]) => !HIDDEN.has(k))
    .map(([k, v]) => `${k}=${value(v)}`);
  return `${[time, level, String(rec.msg ?? ""), ...fields].filter(Boolean).join(" ")}\n`;
}

/** A pino destination that writes readable lines to stdout. */
export function prettyStdout(): { write(chunk: string): void } {
  return { write: (chunk) => void process.stdout.write(prettyLogLine(chunk)) };
}
