/**
 * Turning user-typed search text into safe SQL parameters. Nothing here is ever spliced into SQL: the results are
 * bound values, and the FTS expression only ever contains quoted strings, so no input is parsed as FTS syntax.
 */

/** More terms than this add nothing to a search box query and only cost time. */
const MAX_TERMS = 8;
const MAX_TERM_LENGTH = 100;

export interface SearchTerm {
  /** A LIKE pattern (escape character `\`) for a substring match on titles. */
  like: string;
  /** An FTS5 prefix-phrase expression, or null when the term has no indexable characters (e.g. `(`). */
  fts: string | null;
  /**
   * A phrase for the trigram index of titles (a substring match, exactly like `like`: the index holds the titles
   * with ASCII letters lower-cased, and so is the phrase), or null when the term is shorter than three characters,
   * which a trigram index cannot look up (the title is then matched with `like`).
   */
  trigram: string | null;
}

export function searchTerms(q: string | undefined): SearchTerm[] {
  if (!q) return [];
  // Control characters (a NUL ends an FTS5 string early) separate words like spaces do.
  const words = q.split(/[\s\p{Cc}]+/u).filter((w) => w !== "");
  return words.slice(0, MAX_TERMS).map((raw) => {
    const w = raw.slice(0, MAX_TERM_LENGTH);
    return {
      like: `%${escapeLike(w)}%`,
      fts: /[\p{L}\p{N}]/u.test(w) ? ftsPrefixPhrase(w) : null,
      trigram: [...w].length >= 3 ? `"${asciiLower(w).replaceAll('"', '""')}"` : null,
    };
  });
}

/** Lower-cases ASCII letters only, as SQLite's LIKE (and PostgreSQL's `lower(x COLLATE "C")`) compares them. */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** All terms in one message: the expression for searchMessages, or null when nothing is indexable. */
export function ftsAllTerms(terms: SearchTerm[]): string | null {
  const parts = terms.map((t) => t.fts).filter((f): f is string => f !== null);
  return parts.length > 0 ? parts.join(" AND ") : null;
}

/** `"..."*`: a phrase (so `foo-bar` means the adjacent words) matched as a prefix, with `"` doubled. */
function ftsPrefixPhrase(word: string): string {
  return `"${word.replaceAll('"', '""')}"*`;
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}
