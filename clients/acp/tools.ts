/**
 * How an agentd tool call looks in an editor: ACP kind, title, file locations and content (diffs for `write` and
 * `edit`). Pure functions of the tool's name and arguments, so history replay and live events render alike.
 */
import { isAbsolute, resolve } from "node:path";
import type { ToolCallContent, ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";

type Args = Record<string, unknown>;

export function parseArgs(raw: unknown): Args {
  if (raw && typeof raw === "object" && !Array.isArray(raw)) return raw as Args;
  if (typeof raw !== "string" || raw === "") return {};
  try {
    const v = JSON.parse(raw) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Args) : {};
  } catch {
    return {};
  }
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

const KINDS: Record<string, ToolKind> = {
  read: "read",
  skill: "read",
  session_history: "read",
  ls: "search",
  glob: "search",
  grep: "search",
  memory: "search",
  write: "edit",
  edit: "edit",
  bash: "execute",
  bash_output: "execute",
  ssh: "execute",
  web_fetch: "fetch",
  web_search: "fetch",
  todo_write: "think",
};

export function toolKind(name: string): ToolKind {
  return KINDS[name] ?? "other";
}

function filePath(args: Args): string | undefined {
  return str(args.path) ?? str(args.filePath);
}

export function toolTitle(name: string, args: Args): string {
  const path = filePath(args);
  switch (name) {
    case "read":
      return path ? `Read ${path}` : "Read";
    case "write":
      return path ? `Write ${path}` : "Write";
    case "edit":
      return path ? `Edit ${path}` : "Edit";
    case "ls":
      return `List ${path ?? "."}`;
    case "glob":
      return `Find ${str(args.pattern) ?? "files"}${path ? ` in ${path}` : ""}`;
    case "grep":
      return `Search "${str(args.pattern) ?? ""}"${path ? ` in ${path}` : ""}`;
    case "bash":
      return str(args.command) ? `Run ${str(args.command)}` : "Run a command";
    case "web_fetch":
      return str(args.url) ? `Fetch ${str(args.url)}` : "Fetch";
    case "web_search":
      return str(args.query) ? `Search the web for "${str(args.query)}"` : "Search the web";
    case "todo_write":
      return "Update the plan";
    case "question":
      return "Ask the user";
    default:
      return name;
  }
}

function absolute(cwd: string, p: string): string {
  return isAbsolute(p) ? p : resolve(cwd, p);
}

export function toolLocations(name: string, args: Args, cwd: string): ToolCallLocation[] {
  const path = filePath(args);
  if (!path || !["read", "write", "edit", "ls", "grep", "glob"].includes(name)) return [];
  const loc: ToolCallLocation = { path: absolute(cwd, path) };
  if (name === "read" && typeof args.offset === "number") loc.line = args.offset;
  return [loc];
}

/** A write is a diff from nothing known to the new content; an edit is the replaced snippet. */
export function toolDiff(name: string, args: Args, cwd: string): ToolCallContent[] {
  const path = filePath(args);
  if (!path) return [];
  if (name === "write" && typeof args.content === "string") {
    return [{ type: "diff", path: absolute(cwd, path), oldText: null, newText: args.content }];
  }
  if (name === "edit" && typeof args.newString === "string") {
    const oldText = typeof args.oldString === "string" && args.oldString !== "" ? args.oldString : null;
    return [{ type: "diff", path: absolute(cwd, path), oldText, newText: args.newString }];
  }
  return [];
}

export function textContent(text: string): ToolCallContent {
  return { type: "content", content: { type: "text", text } };
}
