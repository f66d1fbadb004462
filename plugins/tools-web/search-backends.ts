import type { WebSearchBackend, WebSearchResult } from "../../core/index.js";

/** Removes the highlighting markup (`<strong>`) and entities search APIs put into snippets. */
function plain(html: string | undefined): string {
  return (html ?? "")
    .replace(/<[^>]*>/g, "")
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** GET a JSON API. Error messages name the service and status but never the request headers (API keys). */
async function getJson(service: string, url: URL, headers: Record<string, string>, signal: AbortSignal, hint = "") {
  const res = await fetch(url, { headers: { accept: "application/json", ...headers }, signal });
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`${service} answered HTTP ${res.status}${hint && res.status === 403 ? ` (${hint})` : ""}`);
  }
  try {
    return (await res.json()) as unknown;
  } catch {
    throw new Error(`${service} did not answer with JSON`);
  }
}

function toResults(items: unknown, snippetKey: string): WebSearchResult[] {
  if (!Array.isArray(items)) return [];
  const out: WebSearchResult[] = [];
  for (const item of items) {
    const rec = asRecord(item);
    const url = str(rec?.url);
    if (!rec || !url) continue;
    out.push({ title: plain(str(rec.title)), url, snippet: plain(str(rec[snippetKey])) });
  }
  return out;
}

/** A SearXNG instance's JSON API (`/search?format=json`; the instance must list `json` in `search.formats`). */
export function createSearxngBackend(baseUrl: string): WebSearchBackend {
  const endpoint = new URL(baseUrl);
  // Accept both the instance root and its /search path.
  if (!endpoint.pathname.endsWith("/search")) endpoint.pathname = `${endpoint.pathname.replace(/\/$/, "")}/search`;
  return {
    id: "searxng",
    async search(query, { signal }) {
      const url = new URL(endpoint);
      url.searchParams.set("q", query);
      url.searchParams.set("format", "json");
      const body = await getJson("SearXNG", url, {}, signal, "enable the json format in the instance's settings.yml");
      return toResults(asRecord(body)?.results, "content");
    },
  };
}

export const BRAVE_ENDPOINT = "https://api.search.brave.com/res/v1/web/search";

/** The Brave Search API; `endpoint` exists for tests and proxies. */
export function createBraveBackend(apiKey: string, endpoint = BRAVE_ENDPOINT): WebSearchBackend {
  return {
    id: "brave",
    async search(query, { limit, signal }) {
      const url = new URL(endpoint);
      url.searchParams.set("q", query);
      url.searchParams.set("count", String(Math.min(limit, 20)));
      const body = await getJson("Brave Search", url, { "x-subscription-token": apiKey }, signal, "check the API key");
      return toResults(asRecord(asRecord(body)?.web)?.results, "description");
    },
  };
}
