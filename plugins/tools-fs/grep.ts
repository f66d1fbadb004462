import { stat } from "node:fs/promises";
import path from "node:path";
import {
  candidateFiles,
  confirmInside,
  defineTool,
  ripgrepPrefilter,
  type SearchEngineName,
  type SearchState,
  searchEngine,
  T,
  type ToolDefinition,
  ToolFailure,
  toolError,
  withFileInside,
} from "../../core/index.js";
import { formatBytes, plural } from "./content.js";
import { checkPattern, compileGlob } from "./glob.js";
import { FileSearch, MODES, Output, type Search } from "./grep-file.js";
import type { FsLimits } from "./limits.js";
import { displayPath, resolvePath } from "./paths.js";
import { fsFailure } from "./result.js";
import { type Line, scanLines, type Verdict } from "./scan.js";

const MAX_CONTEXT = 50;

type Compiled = Pick<Search, "regex" | "multiline" | "prefilter" | "ignoreCase">;

function buildRegex(pattern: string, literal: boolean, ignoreCase: boolean): Compiled {
  let source = literal ? pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : pattern;
  // ripgrep's inline flag is common in models' habits; JavaScript has no inline flags.
  if (!literal && source.startsWith("(?i)")) {
    source = source.slice(4);
    ignoreCase = true;
  }
  const flags = ignoreCase ? "i" : "";
  const prefilter = ripgrepPrefilter(source);
  try {
    // Unicode mode first (\p{L}, astral characters); it rejects some loose escapes that plain mode accepts.
    const regex = new RegExp(source, `${flags}u`);
    return { regex, multiline: new RegExp(source, `${flags}mu`), prefilter, ignoreCase };
  } catch {
    try {
      const regex = new RegExp(source, flags);
      return { regex, multiline: new RegExp(source, `${flags}m`), prefilter, ignoreCase };
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new ToolFailure(
        "invalid_arguments",
        `"pattern" is not a valid regular expression (${why}). Escape special characters or set literal: true.`,
        "Fix the arguments and call the tool again.",
      );
    }
  }
}

/** The files to search: one named file, or a directory's candidate files (core/search) under a glob filter. */
interface Targets {
  base: string;
  files: AsyncIterable<string[]> | string[][];
  state: SearchState;
}

export function createGrepTool(limits: FsLimits, engine?: SearchEngineName): ToolDefinition {
  return defineTool({
    name: "grep",
    readOnly: true,
    description:
      "Search file contents with a regular expression (JavaScript syntax, matched line by line; set literal for " +
      'plain text). Output modes: "content" (default; "path:line:text", context lines as "path-line-text", groups ' +
      'separated by "--"), "files_with_matches" (paths only), "count" ("path:N" matching lines per file). ' +
      "Files ignored by .gitignore, .ignore or the global git excludes, the .git directory, binary files and " +
      "symbolic links are skipped; hidden files are searched. Paths are relative to the working directory; files " +
      "are searched in path order (a directory's entries by name, depth first).",
    parameters: T.Object(
      {
        pattern: T.String({ minLength: 1, description: "Regular expression (or plain text with literal: true)." }),
        path: T.Optional(T.String({ description: "File or directory to search. Default: the working directory." })),
        glob: T.Optional(
          T.String({ description: 'Only files matching this glob, e.g. "*.ts" or "src/**/*.{js,ts}".' }),
        ),
        ignoreCase: T.Optional(T.Boolean({ description: "Case-insensitive match." })),
        literal: T.Optional(T.Boolean({ description: "Treat pattern as plain text, not a regular expression." })),
        context: T.Optional(
          T.Integer({
            minimum: 0,
            maximum: MAX_CONTEXT,
            description: "Lines of context before and after each match (content mode).",
          }),
        ),
        before: T.Optional(
          T.Integer({
            minimum: 0,
            maximum: MAX_CONTEXT,
            description: "Lines of context before each match (overrides context).",
          }),
        ),
        after: T.Optional(
          T.Integer({
            minimum: 0,
            maximum: MAX_CONTEXT,
            description: "Lines of context after each match (overrides context).",
          }),
        ),
        outputMode: T.Optional(
          T.Union(
            MODES.map((m) => T.Literal(m)),
            { description: 'Default "content".' },
          ),
        ),
        limit: T.Optional(
          T.Integer({
            minimum: 1,
            description:
              `Max matching lines (content) or files (other modes); default ${limits.grepDefaultLimit}, ` +
              `at most ${limits.grepMaxLimit}.`,
          }),
        ),
      },
      { additionalProperties: false },
    ),
    async execute(args, ctx) {
      const pattern = args.pattern;
      const context = args.context ?? 0;
      const glob = args.glob?.trim();
      if (glob) checkPattern(glob, "glob");
      const s: Search = {
        ...buildRegex(pattern, args.literal ?? false, args.ignoreCase ?? false),
        mode: args.outputMode ?? "content",
        before: args.before ?? context,
        after: args.after ?? context,
        limit: Math.min(args.limit ?? limits.grepDefaultLimit, limits.grepMaxLimit),
        limits,
      };
      const input = args.path ?? ".";
      const resolved = await resolvePath(ctx, input, "read");
      if (!resolved.ok) return resolved.result;
      const { abs, display, root, roots } = resolved.path;

      let targets: Targets;
      const state: SearchState = { engine: engine ?? searchEngine().engine, truncated: false };
      try {
        const st = await stat(abs);
        if (st.isDirectory()) {
          const opts = {
            signal: ctx.signal,
            hidden: ctx.isHidden,
            maxFiles: limits.walkMaxFiles,
            engine,
            only: glob ? compileGlob(glob) : undefined,
          };
          const files = candidateFiles(abs, s, opts, state);
          targets = { base: abs, files, state };
        } else if (st.isFile()) {
          targets = { base: path.dirname(abs), files: [[path.basename(abs)]], state };
        } else {
          return toolError(
            "invalid_arguments",
            `${display} is not a regular file or directory.`,
            "Search files or directories only.",
          );
        }
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        return fsFailure(err, display);
      }
      const out = new Output(limits.grepMaxBytes);
      const skipped = await searchFiles(targets, root, roots, s, out, ctx.signal);
      return report(pattern, display, s, out, skipped, state);
    },
  });
}

interface Skipped {
  large: string[];
  binary: number;
  unreadable: string[];
}

async function searchFiles(
  t: Targets,
  root: string,
  roots: string[],
  s: Search,
  out: Output,
  signal: AbortSignal,
): Promise<Skipped> {
  const skipped: Skipped = { large: [], binary: 0, unreadable: [] };
  const maxLineBytes = Math.max(s.limits.grepMaxLineBytes, 1);
  const chunkBytes = Math.max(s.limits.grepChunkBytes, 16);
  // Leaving the loop early (the output is full) stops the search behind t.files at once.
  for await (const rel of each(t.files)) {
    if (out.full) break;
    signal.throwIfAborted();
    const file = path.join(t.base, rel);
    const shown = displayPath(root, file);
    const search = new FileSearch(shown, s, out);
    // Everything goes through the opened, verified descriptor (its size too): a file swapped for a link, or listed
    // through a directory swapped for a link to elsewhere, is never read, and its name is never shown.
    const scan: Scan = (onLine, skippable, binary) =>
      withFileInside(roots, file, async (opened, fh) => {
        const st = await fh.stat();
        if (!st.isFile()) return "skip";
        if (st.size > s.limits.grepMaxFileBytes) return "large";
        return scanLines(opened, chunkBytes, maxLineBytes, signal, onLine, skippable, binary);
      });
    try {
      const outcome = await scan(
        (line) => search.line(line),
        (run, first, count) => search.skippable(run, first, count),
      );
      if (outcome === "skip") continue;
      if (outcome === "large") {
        skipped.large.push(shown);
        continue;
      }
      // A binary file is named in the count only when it holds a match, so both engines count the same files.
      if (outcome === "binary" && (await binaryMatches(scan, s))) skipped.binary++;
    } catch (err) {
      if (signal.aborted) throw err;
      const code = (err as NodeJS.ErrnoException).code ?? "";
      if (GONE.includes(code)) continue;
      if ((await confirmInside(t.base, [rel])).length > 0) skipped.unreadable.push(shown);
      continue;
    }
    search.finish();
  }
  return skipped;
}

type Scan = (
  onLine: (line: Line) => Verdict,
  skippable: (run: Buffer, first: number, count: number) => boolean,
  binary?: "skip" | "search",
) => Promise<"done" | "stopped" | "binary" | "large" | "skip">;

/** A file that vanished, became a link, or resolved outside the workspace while listed: silently not searched. */
const GONE = ["ENOENT", "ENOTDIR", "ELOOP", "EESCAPE"];

/** One path at a time from batches; leaving the loop early stops the search behind them. */
async function* each(batches: AsyncIterable<string[]> | string[][]): AsyncGenerator<string> {
  for await (const batch of batches) yield* batch;
}

async function binaryMatches(scan: Scan, s: Search): Promise<boolean> {
  const outcome = await scan(
    (line) => (s.regex.test(line.text) ? "stop" : "more"),
    (run) => !s.multiline.test(run.toString("utf8")),
    "search",
  );
  return outcome === "stopped";
}

function names(list: string[]): string {
  return list.slice(0, 5).join(", ") + (list.length > 5 ? ", …" : "");
}

function report(pattern: string, display: string, s: Search, out: Output, skipped: Skipped, state: SearchState) {
  const { limits } = s;
  const notes: string[] = [];
  const unit = s.mode === "content" ? "matching line" : "file";
  if (out.limitHit)
    notes.push(`[Stopped at ${plural(s.limit, unit)}; there are more. Narrow path, glob or pattern, or raise limit.]`);
  if (out.bytesHit)
    notes.push(`[Output capped at ${formatBytes(limits.grepMaxBytes)}; narrow the search to see the rest.]`);
  if (skipped.large.length > 0) {
    notes.push(
      `[Skipped ${plural(skipped.large.length, "file")} over ${formatBytes(limits.grepMaxFileBytes)}: ` +
        `${names(skipped.large)}. Use a shell command (rg, grep) for files this large, or read with offset.]`,
    );
  }
  if (skipped.binary > 0) notes.push(`[Skipped ${plural(skipped.binary, "binary file")} with matches.]`);
  if (skipped.unreadable.length > 0) {
    notes.push(`[Could not read ${plural(skipped.unreadable.length, "file")}: ${names(skipped.unreadable)}.]`);
  }
  if (state.truncated) notes.push(`[Only the first ${limits.walkMaxFiles} files were searched; narrow path.]`);
  const tail = notes.length ? `\n\n${notes.join("\n")}` : "";
  const meta = {
    mode: s.mode,
    matches: out.matches,
    files: out.files,
    truncated: out.full,
    engine: state.engine,
    skipped: { large: skipped.large.length, binary: skipped.binary, unreadable: skipped.unreadable.length },
  };
  if (out.lines.length === 0) {
    return { content: `No matches for ${JSON.stringify(pattern)} in ${display}.${tail}`, meta };
  }
  const summary =
    s.mode === "count" ? `\n\n${plural(out.matches, "matching line")} in ${plural(out.files, "file")}.` : "";
  return { content: out.lines.join("\n") + summary + tail, meta };
}
