/*
 * The file searches of agentd, one implementation for every caller (the glob and grep tools, the session file
 * search), on ripgrep or on the JavaScript walk (engine.ts) with the same results in the same order:
 * regular files only, hidden files included, .git skipped, .rgignore/.ignore/.gitignore/.git/info/exclude and the
 * global git excludes respected (also outside a git repository), symbolic links neither listed nor followed.
 * Results stream in batches (arrays of paths): a consumer that stops early (breaks out of the loop) stops ripgrep or the walk at once, and so
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
  /** Only these paths are yielded and counted against maxFiles (e.g. a glob). */
  only?: (rel: string) => boolean;
  /** Absolute paths hidden from the agent (`ToolContext.isHidden`): never yielded. */
  hidden?: (abs: string) => boolean;
  /**
   * A glob on file names matching at least every path `only` keeps, to spare ripgrep listing the others; it must
   * never be narrower than `only`. (Passed as a file type, which, unlike `-g`, never overrides the ignore rules.)
   */
  ripgrepGlob?: string;
  /**
   * The caller needs every path before it can answer (glob sorts by time): ripgrep then lists in parallel and the
   * paths are sorted here, in one batch, instead of streaming from a single-threaded sorted walk.
   */
  whole?: boolean;
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
  source: AsyncIterable<string[]> | Iterable<string[]>,
  opts: SearchOptions,
  state: SearchState,
): AsyncGenerator<string[]> {
  let n = 0;
  for await (const batch of source) {
    opts.signal.throwIfAborted();
    const out: string[] = [];
    for (const rel of batch) {
      if (!admit(root, rel, opts.hidden) || (opts.only && !opts.only(rel))) continue;
      if (n >= opts.maxFiles) {
        state.truncated = true;
        if (out.length > 0) yield out;
        return;
      }
      n++;
      out.push(rel);
    }
    if (out.length > 0) yield out;
  }
}

/**
 * Collects an unordered ripgrep output into comparePaths order: the same first maxFiles (plus one, to tell that
 * there are more) a depth-first walk would give, in memory bounded by twice that.
 */
async function sortedWhole(source: AsyncIterable<string[]>, opts: SearchOptions): Promise<string[][]> {
  const found: string[] = [];
  for await (const batch of source) {
    for (const rel of batch) if (!opts.only || opts.only(rel)) found.push(rel);
    if (found.length > opts.maxFiles * 2) {
      found.sort(comparePaths);
      found.length = opts.maxFiles + 1;
    }
  }
  return [found.sort(comparePaths)];
}

/** Every file below `root` (see the top of this file), in comparePaths order. */
export async function* listFiles(root: string, opts: SearchOptions, state: SearchState): AsyncGenerator<string[]> {
  const rg = ripgrepPath(opts);
  state.engine = rg ? "ripgrep" : "javascript";
  if (!rg) {
    yield* capped(root, walkFiles(root, opts.signal), opts, state);
    return;
  }
  const args = ["--files", ...LISTING_FLAGS];
  if (opts.ripgrepGlob !== undefined) args.push("--type-add", `only:${opts.ripgrepGlob}`, "--type", "only");
  if (!opts.whole) {
    yield* capped(root, ripgrepPaths(rg, root, ["--sort", "path", ...args], opts.signal), opts, state);
    return;
  }
  yield* capped(root, await sortedWhole(ripgrepPaths(rg, root, args, opts.signal), opts), opts, state);
}

/** Files and what was found out about each (`found[i]` of `rels[i]`): two arrays, not a pair object per file. */
export interface Visited<T> {
  rels: string[];
  found: T[];
}

/** Keeps the first `n` of `v` in comparePaths order. */
function keepFirst<T>(v: Visited<T>, n: number): Visited<T> {
  const order = Array.from(v.rels.keys())
    .sort((i, j) => comparePaths(v.rels[i] as string, v.rels[j] as string))
    .slice(0, n);
  return { rels: order.map((i) => v.rels[i] as string), found: order.map((i) => v.found[i] as T) };
}

/**
 * Every file below `root` (as listFiles lists it, the first maxFiles in comparePaths order), each with what `visit`
 * found out about it (`visit` returns one value per path, in the order given), in no particular order: the caller
 * orders them (glob by time). On ripgrep, which lists in parallel, each batch is visited as ripgrep prints it, while
 * it still lists the rest, instead of after the listing and the sort: a caller that needs a system call per file
 * (glob dates every match) overlaps them with ripgrep's work. On the JavaScript walk, the batches are visited as the
 * walk yields them.
 */
export async function visitFiles<T>(
  root: string,
  opts: Omit<SearchOptions, "whole">,
  state: SearchState,
  visit: (rels: string[]) => Promise<T[]>,
): Promise<Visited<T>> {
  let out: Visited<T> = { rels: [], found: [] };
  const add = (batch: string[], found: T[]) => {
    for (let i = 0; i < batch.length; i++) {
      out.rels.push(batch[i] as string);
      out.found.push(found[i] as T);
    }
  };
  const rg = ripgrepPath(opts);
  state.engine = rg ? "ripgrep" : "javascript";
  if (!rg) {
    for await (const batch of capped(root, walkFiles(root, opts.signal), opts, state)) add(batch, await visit(batch));
    return out;
  }
  const args = ["--files", ...LISTING_FLAGS];
  if (opts.ripgrepGlob !== undefined) args.push("--type-add", `only:${opts.ripgrepGlob}`, "--type", "only");
  for await (const batch of ripgrepPaths(rg, root, args, opts.signal)) {
    const kept = batch.filter((rel) => admit(root, rel, opts.hidden) && (!opts.only || opts.only(rel)));
    if (kept.length === 0) continue;
    const found = await visit(kept);
    opts.signal.throwIfAborted();
    add(kept, found);
    // Memory bounded by twice the cap: only the first maxFiles (plus one, to tell there are more) can be kept.
    if (out.rels.length > opts.maxFiles * 2) out = keepFirst(out, opts.maxFiles + 1);
  }
  if (out.rels.length > opts.maxFiles) {
    state.truncated = true;
    out = keepFirst(out, opts.maxFiles);
  }
  return out;
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
): AsyncGenerator<string[]> {
  const rg = ripgrepPath(opts);
  if (!rg || query.prefilter === undefined) {
    yield* listFiles(root, opts, state);
    return;
  }
  state.engine = "ripgrep";
  const args = ["--files-with-matches", "--text", "--crlf", ...LISTING_FLAGS];
  if (query.ignoreCase) args.push("--ignore-case");
  args.push("--regexp", query.prefilter);
  let found: string[][];
  try {
    found = await sortedWhole(ripgrepPaths(rg, root, args, opts.signal), opts);
  } catch (err) {
    if (!(err instanceof RipgrepError)) throw err;
    yield* listFiles(root, opts, state);
    return;
  }
  yield* capped(root, found, opts, state);
}
