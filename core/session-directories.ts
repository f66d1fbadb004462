import { realpathSync, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { ApiError } from "./errors.js";
import { isInside, pathAndAncestors } from "./paths.js";
import type { SessionDirectory, SessionStore } from "./store.js";

/** Sessions (directories) read per page by `sessionsIn` (`sessionDirectories`). */
const DIRECTORY_PAGE = 500;

/**
 * The sessions' working directories, asked of the store's directory index page by page (a store without the
 * directory queries is read once per question).
 */
export class SessionDirectories {
  constructor(private readonly store: SessionStore) {}

  async *sessionsIn(dir: string, opts: { below?: boolean } = {}): AsyncIterable<SessionDirectory> {
    const below = opts.below === true;
    const store = this.store;
    if (!store.sessionsInDirectory) {
      for (const s of await this.allDirectories()) if (below ? isInside(dir, s.cwd) : s.cwd === dir) yield s;
      return;
    }
    for (let after: SessionDirectory | undefined; ; ) {
      const page = await store.sessionsInDirectory(dir, { below, after, limit: DIRECTORY_PAGE });
      yield* page;
      if (page.length < DIRECTORY_PAGE) return;
      after = page[page.length - 1];
      await nextTurn();
    }
  }

  /** Session directories are stored resolved, so comparing `dir` and its ancestors with them is enough. */
  async inSessionDirectory(dir: string): Promise<boolean> {
    const candidates = pathAndAncestors(dir);
    if (!this.store.usedDirectories) return (await this.allDirectories()).some((s) => candidates.includes(s.cwd));
    return (await this.store.usedDirectories(candidates)).length > 0;
  }

  async *sessionDirectories(): AsyncIterable<string> {
    const store = this.store;
    if (!store.distinctDirectories) {
      yield* new Set((await this.allDirectories()).map((s) => s.cwd));
      return;
    }
    for (let after = ""; ; ) {
      const page = await store.distinctDirectories(after, DIRECTORY_PAGE);
      yield* page;
      if (page.length < DIRECTORY_PAGE) return;
      after = page[page.length - 1] ?? after;
      await nextTurn();
    }
  }

  /** A store without the directory queries: every session's directory, read for the one question asked. */
  private async allDirectories(): Promise<SessionDirectory[]> {
    const { sessions } = await (this.store.listEntries?.({}) ?? this.store.listSessions({}));
    return sessions.map((s) => ({ id: s.id, cwd: s.cwd }));
  }
}

/** A session's working directory as given: absolute, an existing directory; returned resolved (symlinks). */
export function resolveDirectory(dir: string): string {
  if (!isAbsolute(dir)) throw ApiError.badRequest(`cwd must be an absolute path: ${dir}`);
  let st: ReturnType<typeof statSync> | undefined;
  try {
    st = statSync(dir);
  } catch {
    throw ApiError.badRequest(`cwd does not exist: ${dir}`);
  }
  if (!st.isDirectory()) throw ApiError.badRequest(`cwd is not a directory: ${dir}`);
  return realpathSync(dir);
}
