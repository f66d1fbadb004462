import {
  defineTool,
  errorMessage,
  type Static,
  T,
  type ToolDefinition,
  type ToolResult,
  toDisposable,
  toolError,
  type WebSearchBackend,
  type WebSearchRegistry,
  type WebSearchResult,
} from "../../core/index.js";
import { capText, withTimeout } from "./results.js";

export function createWebSearchRegistry(): WebSearchRegistry {
  const backends = new Map<string, WebSearchBackend>();
  return {
    add(backend) {
      if (backends.has(backend.id)) throw new Error(`web search backend "${backend.id}" is already registered`);
      backends.set(backend.id, backend);
      return toDisposable(() => {
        if (backends.get(backend.id) === backend) backends.delete(backend.id);
      });
    },
    get: (id) => backends.get(id),
    list: () => [...backends.values()],
  };
}

export const CONFIG_KEY = "pluginOptions.tools-web.search";
const CONFIG_EXAMPLE = `{"backend":"searxng","url":"http://localhost:8888"} or {"backend":"brave","apiKey":"..."}`;
const DEFAULT_RESULTS = 10;
const MAX_RESULTS = 20;
const MAX_OUTPUT_CHARS = 20_000;

export const WebSearchParams = T.Object({
  query: T.String({ minLength: 1, maxLength: 500, description: "What to search the web for" }),
  maxResults: T.Optional(
    T.Integer({
      minimum: 1,
      maximum: MAX_RESULTS,
      description: `Results returned at most (default ${DEFAULT_RESULTS})`,
    }),
  ),
});
export type WebSearchArgs = Static<typeof WebSearchParams>;

export interface WebSearchToolOptions {
  registry: WebSearchRegistry;
  /** The configured backend id; undefined lets any registered backend serve. */
  selected?: string;
  /** Why the configured backend could not be set up (e.g. a missing url), reported on use. */
  configProblem?: string;
  timeoutMs?: number;
}

export function createWebSearchTool(opts: WebSearchToolOptions): ToolDefinition<WebSearchArgs> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  return defineTool({
    name: "web_search",
    description:
      "Search the web. Returns titles, URLs and snippets; read a result with web_fetch. " +
      "Needs a search backend configured by the user.",
    parameters: WebSearchParams,
    readOnly: true,
    async execute(args, ctx): Promise<ToolResult> {
      const query = args.query.trim();
      if (!query) return toolError("invalid_arguments", "The query is empty.", "Pass words to search for.", false);
      const backend = pickBackend(opts);
      if (!("search" in backend)) return backend;

      const limit = Math.min(Math.max(args.maxResults ?? DEFAULT_RESULTS, 1), MAX_RESULTS);
      const { signal, timedOut } = withTimeout(ctx.signal, timeoutMs);
      let results: WebSearchResult[];
      try {
        results = (await backend.search(query, { limit, signal })).slice(0, limit);
      } catch (err) {
        if (ctx.signal.aborted) return toolError("aborted", "The search was aborted.", "Nothing to do.", false);
        if (timedOut()) {
          return toolError(
            "timeout",
            `The ${backend.id} search did not answer within ${timeoutMs / 1000} s.`,
            "Retry later.",
            true,
          );
        }
        return toolError(
          "unavailable",
          `The ${backend.id} search failed: ${errorMessage(err)}`,
          "Retry later; if it keeps failing, the search backend needs the user's attention.",
          true,
        );
      }
      return {
        content: formatResults(query, backend.id, results),
        meta: { backend: backend.id, count: results.length },
      };
    },
  });
}

function pickBackend(opts: WebSearchToolOptions): WebSearchBackend | ToolResult {
  if (opts.configProblem) {
    return toolError("unavailable", `Web search is misconfigured: ${opts.configProblem}`, `Fix ${CONFIG_KEY}.`, false);
  }
  const available = opts.registry.list();
  if (opts.selected !== undefined) {
    const chosen = opts.registry.get(opts.selected);
    if (chosen) return chosen;
    const names = available.map((b) => b.id).join(", ") || "none";
    return toolError(
      "unavailable",
      `${CONFIG_KEY}.backend is "${opts.selected}", but no such search backend is registered (registered: ${names}).`,
      `Ask the user to fix ${CONFIG_KEY}.backend.`,
      false,
    );
  }
  const first = available[0];
  if (first) return first;
  return toolError(
    "unavailable",
    `No web search backend is configured. The user can set ${CONFIG_KEY} in the agentd config, ` +
      `for example ${CONFIG_EXAMPLE}. Until then, use web_fetch with a known URL.`,
    `Ask the user to configure ${CONFIG_KEY}, or fetch a known URL with web_fetch.`,
    false,
  );
}

function formatResults(query: string, backendId: string, results: WebSearchResult[]): string {
  if (results.length === 0) return `No web results for "${query}" (via ${backendId}).`;
  const blocks = results.map((r, i) => {
    const snippet = r.snippet.replace(/\s+/g, " ").trim();
    return `${i + 1}. ${r.title.trim() || "(untitled)"}\n   ${r.url}${snippet ? `\n   ${snippet}` : ""}`;
  });
  const text = `Web results for "${query}" (via ${backendId}):\n\n${blocks.join("\n\n")}`;
  return capText(text, MAX_OUTPUT_CHARS, "Ask for fewer results.").text;
}
