import {
  defineTool,
  errorMessage,
  type Static,
  T,
  type ToolDefinition,
  type ToolResult,
  toolError,
} from "../../core/index.js";
import { clip, joinCapped, stringEnum } from "./results.js";
import type { MemoryNote, MemoryScope, MemoryStore } from "./store.js";

const MAX_NOTE_CHARS = 10_000;
const MAX_OUTPUT_CHARS = 20_000;
const ENTRY_CHARS = 1_000;
const DEFAULT_SEARCH_LIMIT = 8;
const DEFAULT_LIST_LIMIT = 20;

export const MemoryParams = T.Object({
  operation: T.Optional(
    stringEnum(["search", "save", "list", "delete"], {
      description: "search (default): find notes by words; save: store `content`; list: newest notes; delete: by `id`",
    }),
  ),
  query: T.Optional(T.String({ maxLength: 1000, description: "search: words to look for (any of them matches)" })),
  content: T.Optional(
    T.String({ maxLength: MAX_NOTE_CHARS, description: "save: the note, self-contained and worth knowing later" }),
  ),
  id: T.Optional(T.Integer({ minimum: 1, description: "delete: the note id (#N in search and list results)" })),
  scope: T.Optional(
    stringEnum(["project", "global", "all"], {
      description:
        "save: project (default, tied to this working directory) or global (applies everywhere). " +
        "search/list: project (default: this project's notes, then global ones), global, or all projects",
    }),
  ),
  limit: T.Optional(T.Integer({ minimum: 1, maximum: 50, description: "search/list: notes returned at most" })),
});
export type MemoryArgs = Static<typeof MemoryParams>;

function where(note: MemoryNote, cwd: string): string {
  if (note.project === null) return "global";
  return note.project === cwd ? "this project" : `project ${note.project}`;
}

function line(note: MemoryNote, cwd: string): string {
  return `#${note.id} [${where(note, cwd)}, ${note.createdAt.slice(0, 10)}] ${clip(note.content, ENTRY_CHARS)}`;
}

/** Notes as a result: a header line, then one line per note, capped. */
function listing(header: string, notes: MemoryNote[], cwd: string): ToolResult {
  return {
    content: joinCapped(
      header,
      notes.map((n) => line(n, cwd)),
      MAX_OUTPUT_CHARS,
    ),
    meta: { count: notes.length },
  };
}

/** `openStore` is called on first use, so the database file is only created when the model uses memory. */
export function createMemoryTool(openStore: () => MemoryStore): ToolDefinition<MemoryArgs> {
  return defineTool({
    name: "memory",
    description:
      "Your notes across sessions. Save durable facts (project conventions, user preferences, decisions, " +
      "gotchas) and search them before re-discovering something. Notes belong to this project unless saved " +
      "with scope global.",
    parameters: MemoryParams,
    readOnly: true,
    async execute(args, ctx): Promise<ToolResult> {
      try {
        return run(openStore(), args, ctx.cwd);
      } catch (err) {
        return toolError("execution_failed", `memory failed: ${errorMessage(err)}`, "Retry once.", true);
      }
    },
  });
}

function run(store: MemoryStore, args: MemoryArgs, cwd: string): ToolResult {
  const operation = args.operation ?? "search";
  const scope: MemoryScope = args.scope ?? "project";
  switch (operation) {
    case "save": {
      const content = args.content?.trim();
      if (!content) {
        return toolError("invalid_arguments", "save needs `content`.", "Pass the note text as content.", false);
      }
      if (content.length > MAX_NOTE_CHARS) {
        return toolError("invalid_arguments", `The note is over ${MAX_NOTE_CHARS} characters.`, "Shorten it.", false);
      }
      if (scope === "all") {
        return toolError("invalid_arguments", 'save takes scope "project" or "global".', "Pick one.", false);
      }
      const { note, existed } = store.save(content, scope === "global" ? null : cwd);
      const place = note.project === null ? "global" : `project ${note.project}`;
      return {
        content: existed ? `Already saved as note #${note.id} (${place}).` : `Saved note #${note.id} (${place}).`,
        meta: { id: note.id, existed },
      };
    }
    case "search": {
      const query = args.query?.trim();
      if (!query) {
        return toolError("invalid_arguments", "search needs `query`.", 'Pass words to look for, or use "list".', false);
      }
      const notes = store.search(query, { scope, project: cwd, limit: args.limit ?? DEFAULT_SEARCH_LIMIT });
      if (notes.length === 0) return { content: `No notes match "${query}" (scope ${scope}).`, meta: { count: 0 } };
      return listing(`${notes.length} note${notes.length === 1 ? "" : "s"} match "${query}":`, notes, cwd);
    }
    case "list": {
      const notes = store.list({ scope, project: cwd, limit: args.limit ?? DEFAULT_LIST_LIMIT });
      if (notes.length === 0) return { content: `No notes saved yet (scope ${scope}).`, meta: { count: 0 } };
      return listing(
        `${notes.length} note${notes.length === 1 ? "" : "s"} (scope ${scope}, newest first):`,
        notes,
        cwd,
      );
    }
    case "delete": {
      if (args.id === undefined) {
        return toolError("invalid_arguments", "delete needs `id`.", "Find the id with search or list.", false);
      }
      const note = store.delete(args.id);
      if (!note) {
        return toolError("not_found", `There is no note #${args.id}.`, "Find the id with search or list.", false);
      }
      return { content: `Deleted note #${note.id}: ${clip(note.content, 200)}`, meta: { id: note.id } };
    }
    default:
      return toolError(
        "invalid_arguments",
        `Unknown operation "${String(operation)}".`,
        "Use search, save, list or delete.",
        false,
      );
  }
}
