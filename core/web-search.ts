import type { Disposable } from "./disposable.js";
import { createToken } from "./tokens.js";

export interface WebSearchResult {
  title: string;
  url: string;
  snippet: string;
}

/** A search engine web_search can use. Other plugins add theirs through `WebSearchRegistryToken`. */
export interface WebSearchBackend {
  /** What `pluginOptions.tools-web.search.backend` names to select it. */
  readonly id: string;
  search(query: string, opts: { limit: number; signal: AbortSignal }): Promise<WebSearchResult[]>;
}

/** The search engines of `web_search` (the `tools-web` plugin provides it). */
export interface WebSearchRegistry {
  /** Refuses a second backend with the same id. */
  add(backend: WebSearchBackend): Disposable;
  get(id: string): WebSearchBackend | undefined;
  list(): WebSearchBackend[];
}

export const WebSearchRegistryToken = createToken<WebSearchRegistry>("web-search-backends");
