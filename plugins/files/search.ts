import { comparePaths, confirmInside, listFiles, type SearchEngineName, type SearchState } from "../../core/index.js";
import type { EntryType } from "./entries.js";

export interface SearchHit {
  path: string;
  type: EntryType;
}

export interface SearchLimits {
  /** Results returned at most. */
  maxResults: number;
  /** Files listed at most (the search stops there and reports `truncated`). */
  maxVisited: number;
  /** Force a search engine (tests); default: ripgrep when found (core/search/engine.ts). */
  engine?: SearchEngineName;
}

function depth(rel: string): number {
  let n = 0;
  for (let i = rel.indexOf("/"); i !== -1; i = rel.indexOf("/", i + 1)) n++;
  return n;
}

/**
 * Case-insensitive substring search over names (over the whole relative path when the query contains "/") of the
 * files core/search lists (ignore files respected, .git skipped, symbolic links not listed) and of the directories
 * holding them; shallow matches first, then in path order.
 */
export async function searchFiles(
  root: string,
  query: string,
  limits: SearchLimits,
  signal: AbortSignal,
): Promise<{ results: SearchHit[]; truncated: boolean }> {
  const needle = query.toLowerCase();
  const onPath = needle.includes("/");
  const hits: SearchHit[] = [];
  const seenDirs = new Set<string>();
  const test = (rel: string) => (onPath ? rel : rel.slice(rel.lastIndexOf("/") + 1)).toLowerCase().includes(needle);
  const state: SearchState = { engine: "javascript", truncated: false };
  const listing = listFiles(root, { signal, maxFiles: limits.maxVisited, engine: limits.engine, whole: true }, state);
  for await (const batch of listing) {
    for (const rel of batch) {
      for (let i = rel.indexOf("/"); i !== -1; i = rel.indexOf("/", i + 1)) {
        const dir = rel.slice(0, i);
        if (seenDirs.has(dir)) continue;
        seenDirs.add(dir);
        if (test(dir)) hits.push({ path: dir, type: "dir" });
      }
      if (test(rel)) hits.push({ path: rel, type: "file" });
    }
  }
  hits.sort((a, b) => depth(a.path) - depth(b.path) || comparePaths(a.path, b.path));
  // Shown only once confirmed inside the root, as what they were listed as (see confirmInside).
  const results: SearchHit[] = [];
  for (let i = 0; i < hits.length && results.length <= limits.maxResults; i += limits.maxResults) {
    const batch = hits.slice(i, i + limits.maxResults);
    const kinds = new Map(batch.map((h) => [h.path, h.type]));
    for (const [rel, st] of await confirmInside(root, [...kinds.keys()])) {
      if ((kinds.get(rel) === "dir" && st.isDirectory()) || (kinds.get(rel) === "file" && st.isFile())) {
        results.push({ path: rel, type: kinds.get(rel) as EntryType });
      }
    }
  }
  const truncated = state.truncated || results.length > limits.maxResults;
  return { results: results.slice(0, limits.maxResults), truncated };
}
