/**
 * The one gate every search result passes, whichever engine found it: the file listing behind the glob tool and the
 * session file search, and the files the grep tool searches. A path is "/"-separated and relative to the searched
 * directory `root`. It refuses what no listing may yield (an absolute path, "..", the .git directory); a policy that
 * hides further paths (e.g. a sandbox's hidden directories) belongs here, so it holds for every search at once.
 */
export function admit(_root: string, rel: string): boolean {
  return rel !== "" && !REFUSED.test(rel);
}

/** An empty component (a leading, doubled or trailing "/"), ".", ".." or ".git" anywhere. */
const REFUSED = /(?:^|\/)(?:\.{0,2}|\.git)(?:\/|$)/;
