import { searchTerms } from "../storage-sqlite/search.js";

/**
 * Search text to SQL for PostgreSQL. Nothing is spliced into SQL: every term is a bound parameter, parsed by
 * PostgreSQL's own parser (`agentd_prefix_query`, see the migrations), so no input is read as tsquery syntax.
 */

export interface PgTerm {
  /** An ILIKE pattern (escape `\`) for a substring match on titles. */
  like: string;
  /** The term's text for `agentd_prefix_query`, or null when it holds no letter or digit. */
  text: string | null;
}

export function pgTerms(q: string | undefined): PgTerm[] {
  return searchTerms(q).map((t) => ({ like: t.like, text: t.fts === null ? null : termText(t.fts) }));
}

/** The word back out of the FTS5 phrase `"..."*` that `searchTerms` builds (quotes were doubled). */
function termText(fts: string): string {
  return fts.slice(1, -2).replaceAll('""', '"');
}

/**
 * The WHERE clause of a listing: every term in the title or in some user/assistant message of the session.
 * `next` hands out the placeholder of the next parameter (it pushes the value).
 */
export function listFilter(terms: PgTerm[], next: (value: unknown) => string): string {
  const conds = terms.map((t) => {
    const title = `s.title ILIKE ${next(t.like)} ESCAPE '\\'`;
    if (t.text === null) return title;
    return `(${title} OR s.id IN (SELECT m.session_id FROM messages m
      WHERE m.search @@ agentd_prefix_query(${next(t.text)})))`;
  });
  return conds.length > 0 ? `WHERE ${conds.join(" AND ")}` : "";
}
