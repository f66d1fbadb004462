import { searchTerms } from "../storage-sqlite/search.js";

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

/** Lower-cases ASCII letters only, as SQLite's LIKE and PostgreSQL's `lower(x COLLATE "C")` do. */
function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** The word back out of the FTS5 phrase `"..."*` that `searchTerms` builds (quotes were doubled). */
function termText(fts: string): string {
  return fts.slice(1, -2).replaceAll('""', '"');
}

/**
 * The WHERE clause of a listing: every term in the title or in some user/assistant message of the session.
 * `next` hands out the placeholder of the next parameter (it pushes the value). Titles compare as SQLite's LIKE
 * does (ASCII letters folded), in the form the titles' trigram index holds (see the migrations). A term's sessions
 * are one set, the union of two index lookups (that index, the messages' full-text index), so neither side reads
 * every row; an `OR` of the title test and the message subquery would test every session's title.
 */
export function listFilter(terms: PgTerm[], next: (value: unknown) => string): string {
  const title = (alias: string, like: string) => `lower(${alias}.title COLLATE "C") LIKE ${like} ESCAPE '\\'`;
  const conds = terms.map((t) => {
    const like = next(t.like);
    if (t.text === null) return title("s", like);
    return `s.id IN (SELECT t.id FROM sessions t WHERE ${title("t", like)}
      UNION SELECT m.session_id FROM messages m WHERE m.search @@ agentd_prefix_query(${next(t.text)}))`;
  });
  return conds.length > 0 ? `WHERE ${conds.join(" AND ")}` : "";
}
