/*
 * The file searches of agentd, one implementation for every caller (the glob and grep tools, the session file
 * search), on ripgrep or on the JavaScript walk (engine.ts) with the same results in the same order:
 * regular files only, hidden files included, .git skipped, .rgignore/.ignore/.gitignore/.git/info/exclude and the
 * global git excludes respected (also outside a git repository), symbolic links neither listed nor followed.
 * Results stream: a consumer that stops early (breaks out of the loop) stops ripgrep or the walk at once, and so
 * does the abort signal. Every path passes admit() (the one place for a path filter).
 */
import { admit } from "./admit.js";
import { type SearchEngineName, searchEngine } from "./engine.js";
import { comparePaths } from "./order.js";
import { LISTING_FLAGS, RipgrepError, ripgrepPaths } from "./ripgrep.js";
import { walkFiles } from "./walk.js";

export interface SearchOptions {
  signal: AbortSignal;
  /** Paths yielded at most; past it `truncated` is set and the search stops. */
  maxFiles: number;
  /** Force an engine (tests); default: searchEngine(). */
  engine?: SearchEngineName;
}

/** Filled in while a search runs. */
export interface SearchState {
  engine: SearchEngineName;
  truncated: boolean;
}

function ripgrepPath(opts: SearchOptions): string | undefined {
  const info = searchEngine();
  if (opts.engine === "javascript") return undefined;
  if (info.engine === "ripgrep") return info.path;
  if (opts.engine === "ripgrep") throw new Error(`ripgrep is not available: ${info.reason ?? "unknown"}`);
  return undefined;
}

async function* capped(
  root: string,
  source: AsyncIterable<string> | Iterable<string>,
  opts: SearchOptions,
  state: SearchState,
): AsyncGenerator<string> {
  let n = 0;
  for await (const rel of source) {
    opts.signal.throwIfAborted();
    if (!admit(root, rel)) continue;
    if (n >= opts.maxFiles) {
      state.truncated = true;
      return;
    }
    n++;
    yield rel;
  }
}

/** Every file below `root` (see the top of this file), in comparePaths order. */
export function listFiles(root: string, opts: SearchOptions, state: SearchState): AsyncGenerator<string> {
  const rg = ripgrepPath(opts);
  state.engine = rg ? "ripgrep" : "javascript";
  const source = rg
    ? ripgrepPaths(rg, root, ["--files", "--sort", "path", ...LISTING_FLAGS], opts.signal)
    : walkFiles(root, opts.signal);
  return capped(root, source, opts, state);
}

export interface ContentQuery {
  /** A ripgrep (Rust regex) pattern matching at least every line the caller's own regex matches; see regex.ts. */
  prefilter: string | undefined;
  ignoreCase: boolean;
}

/**
 * The files whose content may match, in comparePaths order: on ripgrep the files `rg -l` finds with the prefilter
 * (searched in parallel, then sorted), on the JavaScript engine (or when there is no prefilter, or ripgrep refuses
 * it) every listed file. The caller still matches each file with its own regex: ripgrep only narrows the set.
 */
export async function* candidateFiles(
  root: string,
  query: ContentQuery,
  opts: SearchOptions,
  state: SearchState,
): AsyncGenerator<string> {
  const rg = ripgrepPath(opts);
  if (!rg || query.prefilter === undefined) {
    yield* listFiles(root, opts, state);
    return;
  }
  state.engine = "ripgrep";
  const args = ["--files-with-matches", "--text", "--crlf", ...LISTING_FLAGS];
  if (query.ignoreCase) args.push("--ignore-case");
  args.push("--regexp", query.prefilter);
  const found: string[] = [];
  try {
    for await (const rel of ripgrepPaths(rg, root, args, opts.signal)) {
      found.push(rel);
      // A bound on memory: the sorted first maxFiles are kept when more were found.
      if (found.length > opts.maxFiles * 2) {
        found.sort(comparePaths);
        found.length = opts.maxFiles + 1;
      }
    }
  } catch (err) {
    if (!(err instanceof RipgrepError)) throw err;
    yield* listFiles(root, opts, state);
    return;
  }
  found.sort(comparePaths);
  yield* capped(root, found, opts, state);
}
