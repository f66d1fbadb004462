import { asciiLower, searchTerms } from "../storage-sqlite/search.js";

/**
 * Search text to SQL for PostgreSQL. Nothing is spliced into SQL: every term is a bound parameter, parsed by
 * PostgreSQL's own parser (`agentd_prefix_query`, see the migrations), so no input is read as tsquery syntax.
 */

export interface PgTerm {
  /** A LIKE pattern (escape `\`, ASCII letters lower-cased) for a substring match on titles. */
  like: string;
  /** The term's text for `agentd_prefix_query`, or null when it holds no letter or digit. */
  text: string | null;
}

export function pgTerms(q: string | undefined): PgTerm[] {
  return searchTerms(q).map((t) => ({ like: asciiLower(t.like), text: t.fts === null ? null : termText(t.fts) }));
}

/** The word back out of the FTS5 phrase `"..."*` that `searchTerms` builds (quotes were doubled). */
function termText(fts: string): string {
  return fts.slice(1, -2).replaceAll('""', '"');
}

/**
 * The WHERE clause of a listing: every term in the title or in some user/assistant message of the session.
 * `next` hands out the placeholder of the next parameter (it pushes the value). Titles compare as SQLite's LIKE
 * does (ASCII letters folded), in the form the titles' trigram index holds (see the migrations). The sessions a
 * term's messages match are read first, from the messages' full-text index, as an array of ids: `id = ANY(...)`
 * is an index condition, so the planner can answer the term from the two indexes at once (a bitmap OR) when it is
 * rare, or walk the listing order and test each row when it is common; an `IN (subquery)` would be neither.
 */
export function listFilter(terms: PgTerm[], next: (value: unknown) => string): string {
  const conds = terms.map((t) => {
    const title = `lower(s.title COLLATE "C") LIKE ${next(t.like)} ESCAPE '\\'`;
    if (t.text === null) return title;
    return `(${title} OR s.id = ANY(ARRAY(SELECT DISTINCT m.session_id FROM messages m
      WHERE m.search @@ agentd_prefix_query(${next(t.text)}))))`;
  });
  return conds.length > 0 ? `WHERE ${conds.join(" AND ")}` : "";
}

/**
 * The total of a listing with `where` (from {@link listFilter}, whose first parameters are the terms' like and text,
 * in order). One term: its titles counted from the narrow title table (see the migrations), plus the sessions whose
 * title does not hold it but a message does; the same sessions `where` matches, counted without reading the
 * sessions' rows for the titles. More terms: the sessions `where` matches.
 */
export function countSql(terms: PgTerm[], where: string): string {
  const [only] = terms;
  if (terms.length !== 1 || !only) return `SELECT COUNT(*) AS n FROM sessions s ${where}`;
  const titles = "SELECT COUNT(*) FROM session_titles WHERE title LIKE $1 ESCAPE '\\'";
  if (only.text === null) return `SELECT (${titles}) AS n`;
  return `SELECT (${titles}) + (SELECT COUNT(*) FROM sessions s
    WHERE s.id = ANY(ARRAY(SELECT DISTINCT m.session_id FROM messages m WHERE m.search @@ agentd_prefix_query($2)))
    AND lower(coalesce(s.title, '') COLLATE "C") NOT LIKE $1 ESCAPE '\\') AS n`;
}
