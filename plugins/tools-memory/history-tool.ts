import {
  defineTool,
  errorMessage,
  type MessageHit,
  type SessionStore,
  type Static,
  T,
  type ToolDefinition,
  type ToolResult,
  toolError,
} from "../../core/index.js";
import { clip, joinCapped, stringEnum } from "./results.js";

/** What session_history needs from the store; `getSession` (to tell projects apart) is optional. */
export type SessionHistorySource = Pick<SessionStore, "searchMessages"> & Partial<Pick<SessionStore, "getSession">>;

const DEFAULT_LIMIT = 10;
const SNIPPET_CHARS = 500;
const MAX_OUTPUT_CHARS = 20_000;
/** Hits fetched per wanted hit when filtering to this project, since other projects' hits are dropped afterwards. */
const PROJECT_OVERFETCH = 5;

export const SessionHistoryParams = T.Object({
  query: T.String({ minLength: 1, maxLength: 500, description: "Words to look for in earlier sessions' messages" }),
  limit: T.Optional(
    T.Integer({ minimum: 1, maximum: 50, description: `Messages returned at most (default ${DEFAULT_LIMIT})` }),
  ),
  scope: T.Optional(
    stringEnum(["project", "global"], {
      description: "project (default): sessions in this working directory; global: every session",
    }),
  ),
});
export type SessionHistoryArgs = Static<typeof SessionHistoryParams>;

function when(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

function entry(hit: MessageHit, index: number): string {
  const title = hit.sessionTitle ? `"${clip(hit.sessionTitle, 80)}" ` : "";
  return `[${index + 1}] ${title}(session ${hit.sessionId}) · ${when(hit.createdAt)} · ${hit.role}\n    ${clip(hit.snippet, SNIPPET_CHARS)}`;
}

/** `getStore` is resolved at each call: the store plugin may start after this one registered its tools. */
export function createSessionHistoryTool(
  getStore: () => SessionHistorySource | undefined,
): ToolDefinition<SessionHistoryArgs> {
  return defineTool({
    name: "session_history",
    description:
      "Search the messages of earlier sessions (not this one) by words: what was decided, tried or explained " +
      "before. Returns matching messages with their session and date.",
    parameters: SessionHistoryParams,
    readOnly: true,
    async execute(args, ctx): Promise<ToolResult> {
      const store = getStore();
      if (!store) {
        return toolError(
          "unavailable",
          "Session history is not available (no session store).",
          "Go on without it.",
          false,
        );
      }
      const query = args.query.trim();
      if (!query) return toolError("invalid_arguments", "The query is empty.", "Pass words to look for.", false);
      const limit = args.limit ?? DEFAULT_LIMIT;
      const getSession = store.getSession?.bind(store);
      const thisProject = (args.scope ?? "project") === "project" && getSession !== undefined;

      let hits: MessageHit[];
      try {
        hits = await store.searchMessages(query, {
          excludeSessionId: ctx.sessionId,
          limit: thisProject ? Math.min(limit * PROJECT_OVERFETCH, 200) : limit,
        });
      } catch (err) {
        return toolError(
          "execution_failed",
          `Session search failed: ${errorMessage(err)}`,
          "Try simpler words.",
          false,
        );
      }
      // The store is asked to leave out this session; checked again because a result from it would only echo the turn.
      hits = hits.filter((h) => h.sessionId !== ctx.sessionId);
      if (thisProject && getSession) {
        const cwdOf = new Map<string, string | undefined>();
        for (const h of hits) if (!cwdOf.has(h.sessionId)) cwdOf.set(h.sessionId, (await getSession(h.sessionId))?.cwd);
        hits = hits.filter((h) => cwdOf.get(h.sessionId) === ctx.cwd);
      }
      hits = hits.slice(0, limit);

      const where = thisProject ? "in this project" : "in any project";
      if (hits.length === 0) {
        const hint = thisProject ? ' Try scope "global" or other words.' : " Try other words.";
        return { content: `No messages of earlier sessions ${where} match "${query}".${hint}`, meta: { count: 0 } };
      }
      const header = `${hits.length} message${hits.length === 1 ? "" : "s"} of earlier sessions ${where} match "${query}":`;
      return {
        content: joinCapped(header, hits.map(entry), MAX_OUTPUT_CHARS),
        meta: { count: hits.length, hits: hits.map((h) => ({ sessionId: h.sessionId, seq: h.seq })) },
      };
    },
  });
}
