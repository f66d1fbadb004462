import { lstat, stat } from "node:fs/promises";
import path from "node:path";
import { defineTool, T, type ToolDefinition, ToolFailure, toolError, withFileInside } from "../../core/index.js";
import { formatBytes, plural } from "./content.js";
import { checkPattern } from "./glob.js";
import type { FsLimits } from "./limits.js";
import { displayPath, resolvePath, visibleFiles } from "./paths.js";
import { fsFailure } from "./result.js";
import { type Line, scanLines, type Verdict } from "./scan.js";
import { compileGlob, listFiles } from "./walk.js";

const MODES = ["content", "files_with_matches", "count"] as const;
type Mode = (typeof MODES)[number];
const MAX_CONTEXT = 50;

interface Search {
  regex: RegExp;
  /** The same pattern with "m": finds nothing in a run of lines exactly when no single line matches (or more). */
  multiline: RegExp;
  mode: Mode;
  before: number;
  after: number;
  limit: number;
  limits: FsLimits;
}

/** The output under the match and byte caps. `limitHit` is set only when a match beyond the limit was seen. */
class Output {
  readonly lines: string[] = [];
  bytes = 0;
  matches = 0;
  files = 0;
  limitHit = false;
  bytesHit = false;
  constructor(private readonly maxBytes: number) {}

  get full(): boolean {
    return this.limitHit || this.bytesHit;
  }

  push(line: string): boolean {
    const size = Buffer.byteLength(line) + 1;
    if (this.bytes + size > this.maxBytes && this.lines.length > 0) {
      this.bytesHit = true;
      return false;
    }
    this.lines.push(line);
    this.bytes += size;
    return true;
  }
}

/** Keeps long lines readable: a window around the match rather than a prefix that may not contain it. */
function clip(line: Line, matchAt: number, max: number): string {
  const { text, bytes } = line;
  const cut = bytes > Buffer.byteLength(text) + 2;
  if (text.length <= max && !cut) return text;
  const start = matchAt > max / 2 ? Math.max(0, Math.min(matchAt - 100, text.length - max)) : 0;
  const total = cut ? formatBytes(bytes) : `${text.length} chars`;
  return `${start > 0 ? "… " : ""}${text.slice(start, start + max)} … [line truncated, ${total}]`;
}

/**
 * One file, grep's way: lines before a match wait in a ring of `before` lines, `after` lines follow it, and
 * groups that do not touch are separated by "--". Memory is bounded by the context, never by the file.
 */
class FileSearch {
  private ring: Line[] = [];
  private afterLeft = 0;
  private lastShown = 0;
  hits = 0;

  constructor(
    private readonly shown: string,
    private readonly s: Search,
    private readonly out: Output,
  ) {}

  /**
   * True when a run of whole lines can be skipped: no line in it can match (the multiline regex finds nothing) and
   * no after-context is owed. A cheap regex pass over 64 KiB instead of one call per line; only the last `before`
   * lines are decoded, to serve as context for a match further on.
   */
  skippable(run: Buffer, firstLine: number, count: number): boolean {
    if (this.s.mode === "content" && this.afterLeft > 0) return false;
    if (this.s.multiline.test(run.toString("utf8"))) return false;
    if (this.s.mode === "content" && this.s.before > 0) this.keepTail(run, firstLine, count);
    return true;
  }

  private keepTail(run: Buffer, firstLine: number, count: number): void {
    const tail: Line[] = [];
    let end = run.length - 1;
    for (let k = 0; k < Math.min(this.s.before, count); k++) {
      // Buffer#lastIndexOf counts a negative offset from the end, hence the explicit 0.
      const start = end === 0 ? 0 : run.lastIndexOf(10, end - 1) + 1;
      let text = run.toString("utf8", start, end);
      if (text.endsWith("\r")) text = text.slice(0, -1);
      tail.unshift({ n: firstLine + count - 1 - k, text, bytes: end - start });
      end = start - 1;
    }
    this.ring = [...this.ring, ...tail].slice(-this.s.before);
  }

  line(line: Line): Verdict {
    const m = this.s.regex.exec(line.text);
    if (m) return this.hit(line, m.index);
    if (this.s.mode !== "content") return "more";
    if (this.afterLeft > 0) {
      this.afterLeft--;
      return this.emit(line, undefined);
    }
    if (this.s.before > 0) {
      this.ring.push(line);
      if (this.ring.length > this.s.before) this.ring.shift();
    }
    return "more";
  }

  private hit(line: Line, at: number): Verdict {
    if (this.s.mode === "files_with_matches") {
      this.hits = 1;
      return "stop";
    }
    if (this.s.mode === "count") {
      this.hits++;
      return "more";
    }
    if (this.out.matches >= this.s.limit) {
      this.out.limitHit = true;
      return "stop";
    }
    const firstShown = this.ring[0]?.n ?? line.n;
    const separate = this.s.before > 0 || this.s.after > 0;
    if (separate && this.out.lines.length > 0 && (this.lastShown === 0 || firstShown > this.lastShown + 1)) {
      if (!this.out.push("--")) return "stop";
    }
    for (const before of this.ring) if (this.emit(before, undefined) === "stop") return "stop";
    this.ring = [];
    this.hits++;
    this.out.matches++;
    this.afterLeft = this.s.after;
    return this.emit(line, at);
  }

  private emit(line: Line, at: number | undefined): Verdict {
    this.lastShown = line.n;
    const max = this.s.limits.grepMaxLineChars;
    const text =
      at === undefined
        ? `${this.shown}-${line.n}-${clip(line, 0, max)}`
        : `${this.shown}:${line.n}:${clip(line, at, max)}`;
    return this.out.push(text) ? "more" : "stop";
  }

  /** Records the file in files/count modes once it is done; content mode printed as it went. */
  finish(): void {
    if (this.hits === 0) return;
    if (this.s.mode === "content") {
      this.out.files++;
      return;
    }
    if (this.out.files >= this.s.limit) {
      this.out.limitHit = true;
      return;
    }
    this.out.files++;
    this.out.matches += this.hits;
    this.out.push(this.s.mode === "count" ? `${this.shown}:${this.hits}` : this.shown);
  }
}

function buildRegex(pattern: string, literal: boolean, ignoreCase: boolean): { regex: RegExp; multiline: RegExp } {
  let source = literal ? pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : pattern;
  // ripgrep's inline flag is common in models' habits; JavaScript has no inline flags.
  if (!literal && source.startsWith("(?i)")) {
    source = source.slice(4);
    ignoreCase = true;
  }
  const flags = ignoreCase ? "i" : "";
  try {
    // Unicode mode first (\p{L}, astral characters); it rejects some loose escapes that plain mode accepts.
    return { regex: new RegExp(source, `${flags}u`), multiline: new RegExp(source, `${flags}mu`) };
  } catch {
    try {
      return { regex: new RegExp(source, flags), multiline: new RegExp(source, `${flags}m`) };
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

interface Targets {
  base: string;
  files: string[];
  walkTruncated: boolean;
}

export function createGrepTool(limits: FsLimits): ToolDefinition {
  return defineTool({
    name: "grep",
    readOnly: true,
    description:
      "Search file contents with a regular expression (JavaScript syntax, matched line by line; set literal for " +
      'plain text). Output modes: "content" (default; "path:line:text", context lines as "path-line-text", groups ' +
      'separated by "--"), "files_with_matches" (paths only), "count" ("path:N" matching lines per file). ' +
      "Files ignored by .gitignore, the .git directory, binary files and symbolic links are skipped. Paths are " +
      "relative to the working directory; files are searched in path order.",
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
      try {
        const st = await stat(abs);
        if (st.isDirectory()) {
          const listing = await listFiles(abs, ctx.signal, limits.walkMaxFiles);
          const keep = glob ? compileGlob(glob) : () => true;
          const files = visibleFiles(ctx, abs, listing.files)
            .filter((f) => keep(f))
            .sort();
          targets = { base: abs, files, walkTruncated: listing.truncated };
        } else if (st.isFile()) {
          targets = { base: path.dirname(abs), files: [path.basename(abs)], walkTruncated: false };
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
      return report(pattern, display, s, out, skipped, targets.walkTruncated);
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
  for (const rel of t.files) {
    if (out.full) break;
    signal.throwIfAborted();
    const file = path.join(t.base, rel);
    const shown = displayPath(root, file);
    // lstat: a symbolic link may point outside the workspace, so links are never followed.
    const st = await lstat(file).catch(() => undefined);
    if (!st?.isFile()) continue;
    if (st.size > s.limits.grepMaxFileBytes) {
      skipped.large.push(shown);
      continue;
    }
    const search = new FileSearch(shown, s, out);
    try {
      // Scanned through the opened, verified descriptor: a file swapped for a link meanwhile is not followed.
      const outcome = await withFileInside(roots, file, (opened) =>
        scanLines(
          opened,
          chunkBytes,
          maxLineBytes,
          signal,
          (line) => search.line(line),
          (run, first, count) => search.skippable(run, first, count),
        ),
      );
      if (outcome === "binary") skipped.binary++;
    } catch (err) {
      if (signal.aborted) throw err;
      skipped.unreadable.push(shown);
      continue;
    }
    search.finish();
  }
  return skipped;
}

function names(list: string[]): string {
  return list.slice(0, 5).join(", ") + (list.length > 5 ? ", …" : "");
}

function report(pattern: string, display: string, s: Search, out: Output, skipped: Skipped, walkTruncated: boolean) {
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
  if (skipped.binary > 0) notes.push(`[Skipped ${plural(skipped.binary, "binary file")}.]`);
  if (skipped.unreadable.length > 0) {
    notes.push(`[Could not read ${plural(skipped.unreadable.length, "file")}: ${names(skipped.unreadable)}.]`);
  }
  if (walkTruncated) notes.push(`[Only the first ${limits.walkMaxFiles} files were searched; narrow path.]`);
  const tail = notes.length ? `\n\n${notes.join("\n")}` : "";
  const meta = {
    mode: s.mode,
    matches: out.matches,
    files: out.files,
    truncated: out.full,
    skipped: { large: skipped.large.length, binary: skipped.binary, unreadable: skipped.unreadable.length },
  };
  if (out.lines.length === 0) {
    return { content: `No matches for ${JSON.stringify(pattern)} in ${display}.${tail}`, meta };
  }
  const summary =
    s.mode === "count" ? `\n\n${plural(out.matches, "matching line")} in ${plural(out.files, "file")}.` : "";
  return { content: out.lines.join("\n") + summary + tail, meta };
}
