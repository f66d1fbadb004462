/**
 * How events read in a terminal, shared by `agentd run`, `agentd attach` and the interactive client: one line per
 * tool call (`[edit] src/a.ts +12 -3`, `[bash] npm test`), question and confirmation texts.
 */

/** Exit codes of `agentd run` (documented in the README). */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  disconnected: 3,
  denied: 4,
  question: 5,
  aborted: 130,
} as const;

export function parseArgs(raw: unknown): Record<string, unknown> {
  if (raw && typeof raw === "object") return raw as Record<string, unknown>;
  if (typeof raw !== "string" || raw === "") return {};
  try {
    const v = JSON.parse(raw) as unknown;
    return v && typeof v === "object" ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const lineCount = (s: unknown): number => (typeof s === "string" && s !== "" ? s.split("\n").length : 0);

function oneLine(s: string, max = 100): string {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The summary of a tool call: `[name] what`, e.g. `[edit] src/a.ts +12 -3`. */
export function toolLine(name: string, rawArgs: unknown): string {
  const a = parseArgs(rawArgs);
  const str = (k: string) => (typeof a[k] === "string" ? (a[k] as string) : undefined);
  let what: string;
  switch (name) {
    case "bash":
      what = oneLine(str("command") ?? "");
      break;
    case "edit":
      what = `${str("filePath") ?? str("path") ?? ""} +${lineCount(a.newString)} -${lineCount(a.oldString)}`;
      break;
    case "write":
      what = `${str("path") ?? ""} +${lineCount(a.content)}`;
      break;
    case "read":
    case "ls":
      what = str("path") ?? ".";
      break;
    case "grep":
    case "glob":
      what = `${str("pattern") ?? ""}${str("path") ? ` in ${str("path")}` : ""}`;
      break;
    case "web_fetch":
      what = str("url") ?? "";
      break;
    case "web_search":
      what = str("query") ?? "";
      break;
    case "todo_write":
      what = Array.isArray(a.todos)
        ? `${(a.todos as Array<{ status?: string }>).filter((t) => t.status === "completed").length}/${a.todos.length} done`
        : "";
      break;
    case "question":
      what = Array.isArray(a.questions)
        ? oneLine((a.questions as Array<{ question?: string }>).map((q) => q.question ?? "").join(" / "), 80)
        : "";
      break;
    default: {
      const first = Object.values(a).find((v) => typeof v === "string") as string | undefined;
      what = first ? oneLine(first, 80) : "";
    }
  }
  return `[${name}]${what ? ` ${what}` : ""}`;
}

export interface ToolResultLike {
  content?: unknown;
  isError?: boolean;
  error?: { code?: string; suggestedFix?: string };
}

/** The first line of a failed tool's result, for the line under its tool line. */
export function toolError(result: ToolResultLike | undefined): string {
  const text = typeof result?.content === "string" ? result.content : "";
  const first = oneLine(text.split("\n")[0] ?? "", 160);
  const code = result?.error?.code;
  return code && !first.includes(code) ? `${code}: ${first}` : first;
}

/** The last `n` non-empty lines of a running command's output. */
export function tail(text: string, n: number): string[] {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  return lines.slice(-n);
}

export interface QuestionSpec {
  question: string;
  options: Array<{ label: string; value: string; description?: string }>;
  multiSelect?: boolean;
}

export function formatQuestions(questions: QuestionSpec[]): string {
  return questions
    .map(
      (q, i) =>
        `${i + 1}. ${q.question}${q.multiSelect ? " (several)" : ""}\n${q.options.map((o) => `   - ${o.value}: ${o.label}`).join("\n")}`,
    )
    .join("\n");
}

/** What a session waits for from its user (a summary's `waiting`) as a list shows it, or "" when nothing. */
export function waitingMark(waiting: "confirmation" | "question" | "plan" | undefined): string {
  if (!waiting) return "";
  return `needs you: ${waiting === "confirmation" ? "confirm command" : waiting === "plan" ? "approve plan" : "question"}`;
}

export function shortId(id: string): string {
  return id.length > 10 ? id.slice(0, 10) : id;
}

export function ago(iso: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

export function compactNumber(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** `key: names` lines for the trust prompt, skipping empty groups. */
export function describeResources(resources: Record<string, unknown>): string[] {
  const labels: Record<string, string> = {
    contextFiles: "context files",
    rules: "rules",
    skills: "skills",
    personas: "personas",
    mcp: "MCP servers",
    hooks: "hooks",
    ssh: "SSH hosts",
    plugins: "plugins",
  };
  return Object.entries(resources)
    .filter(([, v]) => Array.isArray(v) && v.length > 0)
    .map(([k, v]) => `${labels[k] ?? k}: ${(v as unknown[]).map(resourceName).join(", ")}`);
}

/** A resource name; project plugins are `{name, state}` (state: new, changed, trusted). */
const resourceName = (x: unknown) =>
  typeof x === "string" ? x : `${(x as { name?: string }).name} (${(x as { state?: string }).state})`;
