/**
 * The one gate every search result passes, whichever engine found it: the file listing behind the glob tool and the
 * session file search, and the files the grep tool searches. A path is "/"-separated and relative to the searched
 * directory `root`. It refuses what no listing may yield (an absolute path, "..", the .git directory) and what
 * `hidden` hides from the agent (the sandbox's hidden paths: the daemon home, ~/.ssh, credentials...).
 */
export function admit(root: string, rel: string, hidden?: (abs: string) => boolean): boolean {
  return rel !== "" && !REFUSED.test(rel) && !hidden?.(`${root}/${rel}`);
}

/** An empty component (a leading, doubled or trailing "/"), ".", ".." or ".git" anywhere. */
const REFUSED = /(?:^|\/)(?:\.{0,2}|\.git)(?:\/|$)/;
