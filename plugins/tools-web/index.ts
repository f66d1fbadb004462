import { definePlugin, type Static, T, type WebSearchBackend, WebSearchRegistryToken } from "../../core/index.js";
import { createWebFetchTool, DEFAULT_FETCH_LIMITS } from "./fetch-tool.js";
import { CONFIG_KEY, createWebSearchRegistry, createWebSearchTool } from "./search.js";
import { createBraveBackend, createSearxngBackend } from "./search-backends.js";

export { createWebFetchTool, DEFAULT_FETCH_LIMITS } from "./fetch-tool.js";
export { createWebSearchRegistry, createWebSearchTool } from "./search.js";
export { BRAVE_ENDPOINT, createBraveBackend, createSearxngBackend } from "./search-backends.js";

const SearchOptions = T.Object({
  backend: T.String({
    minLength: 1,
    description: '"searxng", "brave", or the id of a search backend another plugin registers',
  }),
  url: T.Optional(
    T.String({ description: "searxng: the instance URL (required). brave: an API endpoint override (optional)" }),
  ),
  apiKey: T.Optional(T.String({ description: "brave: the Brave Search API subscription token" })),
  timeoutMs: T.Optional(T.Integer({ minimum: 1000, maximum: 120_000, description: "Default 20000" })),
});

export const WebOptionsSchema = T.Object({
  blockPrivateNetworks: T.Optional(
    T.Boolean({
      description:
        "Refuse URLs whose host is loopback or a private network (default false: a local agent legitimately " +
        "reads docs servers on localhost).",
    }),
  ),
  timeoutMs: T.Optional(T.Integer({ minimum: 1000, maximum: 300_000, description: "Fetch deadline (default 30000)" })),
  maxBytes: T.Optional(
    T.Integer({ minimum: 1024, maximum: 50 * 1024 * 1024, description: "Body bytes read at most (default 5 MiB)" }),
  ),
  search: T.Optional(SearchOptions),
});
export type WebOptions = Static<typeof WebOptionsSchema>;

/** Sets up a built-in backend from the options, or says what is missing. Unknown ids are left to other plugins. */
function builtinBackend(search: Static<typeof SearchOptions>): { backend?: WebSearchBackend; problem?: string } {
  if (search.backend === "searxng") {
    if (!search.url) return { problem: `backend "searxng" needs "url" (the instance URL) in ${CONFIG_KEY}.` };
    try {
      return { backend: createSearxngBackend(search.url) };
    } catch {
      return { problem: `${CONFIG_KEY}.url is not a valid URL.` };
    }
  }
  if (search.backend === "brave") {
    if (!search.apiKey) return { problem: `backend "brave" needs "apiKey" in ${CONFIG_KEY}.` };
    try {
      return { backend: createBraveBackend(search.apiKey, search.url) };
    } catch {
      return { problem: `${CONFIG_KEY}.url is not a valid URL.` };
    }
  }
  return {};
}

/**
 * web_fetch and web_search. Private networks are reachable by default on purpose: fetching a docs server on
 * localhost is a normal thing for a local coding agent; `blockPrivateNetworks` turns that off for shared setups.
 */
export default definePlugin({
  manifest: {
    id: "tools-web",
    version: "1.0.0",
    description: "web_fetch (pages as markdown) and web_search (pluggable search backends)",
    provides: [WebSearchRegistryToken.id],
    capabilities: ["network"],
    configSchema: WebOptionsSchema,
  },
  deps: {},
  register(ctx) {
    const options = ctx.options;
    ctx.tools.add(
      createWebFetchTool({
        blockPrivateNetworks: options.blockPrivateNetworks ?? DEFAULT_FETCH_LIMITS.blockPrivateNetworks,
        timeoutMs: options.timeoutMs ?? DEFAULT_FETCH_LIMITS.timeoutMs,
        maxBytes: options.maxBytes ?? DEFAULT_FETCH_LIMITS.maxBytes,
      }),
    );

    const registry = createWebSearchRegistry();
    ctx.services.provide(WebSearchRegistryToken, registry);
    const { backend, problem } = options.search ? builtinBackend(options.search) : {};
    if (backend) ctx.onDispose(registry.add(backend));
    if (problem) ctx.log.warn(`web_search is unavailable: ${problem}`);
    ctx.tools.add(
      createWebSearchTool({
        registry,
        selected: options.search?.backend,
        configProblem: problem,
        timeoutMs: options.search?.timeoutMs,
      }),
    );
  },
});
