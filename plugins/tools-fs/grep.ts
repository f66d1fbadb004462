import { lstat, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { T, type ToolDefinition } from "../../core/index.js";
import { formatBytes, looksBinary, plural } from "./content.js";
import { checkPattern } from "./glob.js";
import type { FsLimits } from "./limits.js";
import { displayPath, resolvePath } from "./paths.js";
import { ArgError, boolArg, defineTool, enumArg, fsFailure, intArg, requiredString, stringArg } from "./result.js";
import { compileGlob, listFiles } from "./walk.js";

const MODES = ["content", "files_with_matches", "count"] as const;
type Mode = (typeof MODES)[number];
const MAX_CONTEXT = 50;
const ABORT_CHECK_LINES = 10_000;

interface Search {
  regex: RegExp;
  mode: Mode;
  before: number;
  after: number;
  limit: number;
  limits: FsLimits;
}

/** Accumulates the output under the match and byte caps; `full` means stop searching. */
class Output {
  readonly lines: string[] = [];
  bytes = 0;
  matches = 0;
  files = 0;
  limitHit = false;
  bytesHit = false;
  constructor(private readonly s: Search) {}

  get full(): boolean {
    return this.limitHit || this.bytesHit;
  }

  push(line: string): boolean {
    const size = Buffer.byteLength(line) + 1;
    if (this.bytes + size > this.s.limits.grepMaxBytes && this.lines.length > 0) {
      this.bytesHit = true;
      return false;
    }
    this.lines.push(line);
    this.bytes += size;
    return true;
  }
}

/** Keeps long lines readable: a window around the match rather than a prefix that may not contain it. */
function clip(text: string, matchAt: number, max: number): string {
  if (text.length <= max) return text;
  const start = matchAt > max / 2 ? Math.min(matchAt - 100, text.length - max) : 0;
  return `${start > 0 ? "… " : ""}${text.slice(start, start + max)} … [line truncated, ${text.length} chars]`;
}

function matchIndex(regex: RegExp, line: string): number {
  const m = regex.exec(line);
  return m ? m.index : -1;
}

/** Searches one decoded file and appends what the mode asks for to `out`. */
function searchText(text: string, shownPath: string, s: Search, out: Output, signal: AbortSignal): void {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const hits: Array<{ i: number; at: number }> = [];
  for (let i = 0; i < lines.length; i++) {
    if (i % ABORT_CHECK_LINES === 0) signal.throwIfAborted();
    const line = (lines[i] ?? "").replace(/\r$/, "");
    lines[i] = line;
    const at = matchIndex(s.regex, line);
    if (at < 0) continue;
    if (s.mode === "files_with_matches") {
      hits.push({ i, at });
      break;
    }
    if (s.mode === "content" && out.matches + hits.length >= s.limit) {
      out.limitHit = true;
      break;
    }
    hits.push({ i, at });
  }
  if (hits.length === 0) return;

  if (s.mode === "files_with_matches") {
    out.files++;
    if (!out.push(shownPath)) return;
    if (out.files >= s.limit) out.limitHit = true;
    return;
  }
  if (s.mode === "count") {
    out.files++;
    out.matches += hits.length;
    if (!out.push(`${shownPath}:${hits.length}`)) return;
    if (out.files >= s.limit) out.limitHit = true;
    return;
  }

  // content: merge the context windows of neighbouring matches into groups, separated by "--" like grep.
  const hitAt = new Map(hits.map((h) => [h.i, h.at]));
  const max = s.limits.grepMaxLineChars;
  const withContext = s.before > 0 || s.after > 0;
  let shownUntil = -1;
  for (const h of hits) {
    const from = Math.max(h.i - s.before, shownUntil + 1);
    const to = Math.min(h.i + s.after, lines.length - 1);
    const gap = shownUntil < 0 ? out.lines.length > 0 : from > shownUntil + 1;
    if (withContext && gap && !out.push("--")) return;
    for (let i = from; i <= to; i++) {
      const at = hitAt.get(i);
      const text = lines[i] ?? "";
      const line =
        at === undefined ? `${shownPath}-${i + 1}-${clip(text, 0, max)}` : `${shownPath}:${i + 1}:${clip(text, at, max)}`;
      if (!out.push(line)) return;
      if (at !== undefined) out.matches++;
    }
    shownUntil = to;
  }
  out.files++;
}

function buildRegex(pattern: string, literal: boolean, ignoreCase: boolean): RegExp {
  const source = literal ? pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : pattern;
  try {
    return new RegExp(source, ignoreCase ? "i" : "");
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new ArgError(`"pattern" is not a valid regular expression (${why}). Escape special characters or set literal: true.`);
  }
}

export function createGrepTool(limits: FsLimits): ToolDefinition {
  return defineTool({
    name: "grep",
    readOnly: true,
    description:
      "Search file contents with a regular expression (JavaScript syntax; set literal for plain text). " +
      'Output modes: "content" (default; "path:line:text", context lines as "path-line-text"), ' +
      '"files_with_matches" (paths only), "count" (matching lines per file). Files ignored by .gitignore, binary ' +
      `files and files over ${formatBytes(limits.grepMaxFileBytes)} are skipped. Paths are relative to the working directory.`,
    parameters: T.Object(
      {
        pattern: T.String({ description: "Regular expression (or plain text with literal: true)." }),
        path: T.Optional(T.String({ description: "File or directory to search. Default: the working directory." })),
        glob: T.Optional(T.String({ description: 'Only files matching this glob, e.g. "*.ts" or "src/**/*.{js,ts}".' })),
        ignoreCase: T.Optional(T.Boolean({ description: "Case-insensitive match." })),
        literal: T.Optional(T.Boolean({ description: "Treat pattern as plain text, not a regular expression." })),
        context: T.Optional(T.Integer({ minimum: 0, maximum: MAX_CONTEXT, description: "Lines of context before and after each match (content mode)." })),
        before: T.Optional(T.Integer({ minimum: 0, maximum: MAX_CONTEXT, description: "Lines of context before each match (overrides context)." })),
        after: T.Optional(T.Integer({ minimum: 0, maximum: MAX_CONTEXT, description: "Lines of context after each match (overrides context)." })),
        outputMode: T.Optional(T.Union(MODES.map((m) => T.Literal(m)), { description: 'Default "content".' })),
        limit: T.Optional(
          T.Integer({
            minimum: 1,
            maximum: limits.grepMaxLimit,
            description: `Max matching lines (content) or files (other modes); default ${limits.grepDefaultLimit}.`,
          }),
        ),
      },
      { additionalProperties: false },
    ),
    async run(args, ctx) {
      const pattern = requiredString(args, "pattern");
      const context = intArg(args, "context", 0, MAX_CONTEXT) ?? 0;
      const glob = stringArg(args, "glob")?.trim();
      if (glob) checkPattern(glob, "glob");
      const s: Search = {
        regex: buildRegex(pattern, boolArg(args, "literal"), boolArg(args, "ignoreCase")),
        mode: enumArg(args, "outputMode", MODES) ?? "content",
        before: intArg(args, "before", 0, MAX_CONTEXT) ?? context,
        after: intArg(args, "after", 0, MAX_CONTEXT) ?? context,
        limit: intArg(args, "limit", 1, limits.grepMaxLimit) ?? limits.grepDefaultLimit,
        limits,
      };
      const input = stringArg(args, "path") ?? ".";
      const resolved = await resolvePath(ctx, input, "read");
      if (!resolved.ok) return resolved.result;
      const { abs, display, root } = resolved.path;

      let base: string;
      let files: string[];
      let walkTruncated = false;
      try {
        if ((await stat(abs)).isDirectory()) {
          base = abs;
          const listing = await listFiles(abs, ctx.signal, limits.walkMaxFiles);
          walkTruncated = listing.truncated;
          const keep = glob ? compileGlob(glob) : () => true;
          files = listing.files.filter((f) => keep(f)).sort();
        } else {
          base = path.dirname(abs);
          files = [path.basename(abs)];
        }
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        return fsFailure(err, display);
      }

      const out = new Output(s);
      const large: string[] = [];
      let binary = 0;
      for (const rel of files) {
        if (out.full) break;
        ctx.signal.throwIfAborted();
        const file = path.join(base, rel);
        const shown = displayPath(root, file);
        // lstat: a symbolic link may point outside the workspace, so links are never followed.
        const st = await lstat(file).catch(() => undefined);
        if (!st?.isFile()) continue;
        if (st.size > limits.grepMaxFileBytes) {
          large.push(shown);
          continue;
        }
        const data = await readFile(file, { signal: ctx.signal }).catch((err: unknown) => {
          if (ctx.signal.aborted) throw err;
          return undefined;
        });
        if (!data) continue;
        if (looksBinary(data)) {
          binary++;
          continue;
        }
        searchText(data.toString("utf8"), shown, s, out, ctx.signal);
      }

      const notes: string[] = [];
      const unit = s.mode === "content" ? "matching lines" : "files";
      if (out.limitHit) notes.push(`[Stopped at ${s.limit} ${unit}; there may be more. Narrow path, glob or pattern, or raise limit.]`);
      if (out.bytesHit) notes.push(`[Output capped at ${formatBytes(limits.grepMaxBytes)}; narrow the search to see the rest.]`);
      if (large.length > 0) {
        const names = large.slice(0, 5).join(", ") + (large.length > 5 ? ", …" : "");
        notes.push(`[Skipped ${plural(large.length, "file")} over ${formatBytes(limits.grepMaxFileBytes)}: ${names}. Use read with offset to inspect them.]`);
      }
      if (binary > 0) notes.push(`[Skipped ${plural(binary, "binary file")}.]`);
      if (walkTruncated) notes.push(`[Only the first ${limits.walkMaxFiles} files were searched; narrow path.]`);
      const tail = notes.length ? `\n\n${notes.join("\n")}` : "";
      const meta = { matches: out.matches, files: out.files, truncated: out.full };
      if (out.lines.length === 0) {
        return { content: `No matches for ${JSON.stringify(pattern)} in ${display}.${tail}`, meta };
      }
      const summary = s.mode === "count" ? `\n\n${plural(out.matches, "matching line")} in ${plural(out.files, "file")}.` : "";
      return { content: out.lines.join("\n") + summary + tail, meta };
    },
  });
}
