import { open, readFile, stat } from "node:fs/promises";
import {
  defineTool,
  T,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
  toolError,
  withFileInside,
} from "../../core/index.js";
import { formatBytes, imageMime, looksBinary, numbered, plural, readHead } from "./content.js";
import type { FsLimits } from "./limits.js";
import { resolvePath } from "./paths.js";
import { fsFailure } from "./result.js";

const CHUNK = 64 * 1024;

interface Slice {
  lines: string[];
  first: number;
  /** Line number of the last line returned (first - 1 when none). */
  last: number;
  /** Total lines in the file, or undefined when counting stopped at the byte cap. */
  total: number | undefined;
  byteCapped: boolean;
  truncatedLines: number;
}

/**
 * Streams the file once: keeps at most a bounded prefix of each wanted line (a 100 MB one-line file costs
 * kilobytes), then only counts the remaining newlines so the footer can say how far the file goes.
 */
async function readSlice(file: string, first: number, maxLines: number, limits: FsLimits, signal: AbortSignal) {
  const keepBytes = limits.readMaxLineChars * 4 + 4;
  const out: Slice = { lines: [], first, last: first - 1, total: undefined, byteCapped: false, truncatedLines: 0 };
  let outBytes = 0;
  let collecting = true;
  let lineNo = 1;
  let parts: Buffer[] = [];
  let kept = 0;
  let lineBytes = 0;

  const endLine = () => {
    if (collecting && lineNo >= first) {
      let text = Buffer.concat(parts).toString("utf8");
      if (lineNo === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (text.endsWith("\r")) text = text.slice(0, -1);
      if (lineBytes > keepBytes || text.length > limits.readMaxLineChars) {
        text = `${text.slice(0, limits.readMaxLineChars)} … [line truncated: ${formatBytes(lineBytes)} in total]`;
        out.truncatedLines++;
      }
      const formatted = numbered(lineNo, text);
      const size = Buffer.byteLength(formatted) + 1;
      if (outBytes + size > limits.readMaxBytes && out.lines.length > 0) {
        out.byteCapped = true;
        collecting = false;
      } else {
        out.lines.push(formatted);
        out.last = lineNo;
        outBytes += size;
        if (out.lines.length >= maxLines) collecting = false;
      }
    }
    lineNo++;
    parts = [];
    kept = 0;
    lineBytes = 0;
  };

  const fh = await open(file, "r");
  try {
    const buf = Buffer.alloc(CHUNK);
    let consumed = 0;
    for (;;) {
      signal.throwIfAborted();
      const { bytesRead } = await fh.read(buf, 0, CHUNK, null);
      if (bytesRead === 0) break;
      consumed += bytesRead;
      const chunk = buf.subarray(0, bytesRead);
      let pos = 0;
      while (pos < chunk.length) {
        const nl = chunk.indexOf(10, pos);
        if (!collecting || lineNo < first) {
          // A line nobody asked for is only counted: no buffers, no closure call.
          if (nl === -1) {
            lineBytes += chunk.length - pos;
            break;
          }
          lineNo++;
          lineBytes = 0;
          pos = nl + 1;
          continue;
        }
        const end = nl === -1 ? chunk.length : nl;
        if (kept < keepBytes) {
          const piece = chunk.subarray(pos, Math.min(end, pos + keepBytes - kept));
          parts.push(Buffer.from(piece));
          kept += piece.length;
        }
        lineBytes += end - pos;
        if (nl === -1) break;
        endLine();
        pos = nl + 1;
      }
      if (!collecting && consumed > limits.readCountMaxBytes) return out;
    }
    if (lineBytes > 0) endLine();
    out.total = lineNo - 1;
    return out;
  } finally {
    await fh.close();
  }
}

function footer(s: Slice, maxLineChars: number): string {
  const notes: string[] = [];
  const more = s.total === undefined || s.last < s.total;
  if (s.byteCapped || more) {
    const range = `lines ${s.first}-${s.last}`;
    const of = s.total === undefined ? "; the file continues (too large to count its lines)" : ` of ${s.total}`;
    const why = s.byteCapped ? "Output capped by size: showing" : "Showing";
    notes.push(`[${why} ${range}${of}. Call read with offset=${s.last + 1} to continue.]`);
  }
  if (s.truncatedLines > 0) {
    notes.push(
      `[${plural(s.truncatedLines, "line was", "lines were")} longer than ${maxLineChars} characters and truncated; ` +
        "use grep to find specific content in them.]",
    );
  }
  return notes.length ? `\n\n${notes.join("\n")}` : "";
}

async function readImage(file: string, abs: string, display: string, mime: string, size: number, limits: FsLimits) {
  if (size > limits.readMaxImageBytes) {
    return toolError(
      "too_large",
      `${display} is a ${formatBytes(size)} image; the limit is ${formatBytes(limits.readMaxImageBytes)}.`,
      "Downscale it with a shell command into a temporary file and read that instead.",
    );
  }
  const data = await readFile(file);
  return {
    content: `Image ${display} (${mime}, ${formatBytes(size)}) is attached.`,
    images: [{ dataUrl: `data:${mime};base64,${data.toString("base64")}` }],
    meta: { path: abs, mime, bytes: size },
  } satisfies ToolResult;
}

export function createReadTool(limits: FsLimits): ToolDefinition {
  return defineTool({
    name: "read",
    readOnly: true,
    description:
      "Read a text file, returned with line numbers (`cat -n` style). Paths are relative to the working directory. " +
      `Returns at most ${limits.readMaxLines} lines and ${formatBytes(limits.readMaxBytes)} per call; use offset and ` +
      `limit to page through longer files. Lines over ${limits.readMaxLineChars} characters are truncated. ` +
      "PNG, JPEG, GIF and WebP images are attached as images. Other binary files are refused; use ls for directories.",
    parameters: T.Object(
      {
        path: T.String({ minLength: 1, description: "File path, relative to the working directory or absolute." }),
        offset: T.Optional(T.Integer({ minimum: 1, description: "First line to return (1-based). Default 1." })),
        limit: T.Optional(
          T.Integer({ minimum: 1, description: `Lines to return (default and at most ${limits.readMaxLines}).` }),
        ),
      },
      { additionalProperties: false },
    ),
    async execute(args, ctx: ToolContext) {
      const input = args.path;
      const offset = args.offset ?? 1;
      const limit = Math.min(args.limit ?? limits.readMaxLines, limits.readMaxLines);
      const resolved = await resolvePath(ctx, input, "read");
      if (!resolved.ok) return resolved.result;
      const { abs, display, roots } = resolved.path;
      // Everything below reads one opened, verified descriptor (`file`): a swap of the path meanwhile is not seen.
      return withFileInside(roots, abs, (file) => readOpened(file, abs, display, offset, limit, limits, ctx)).catch(
        (err: unknown) => fsFailure(err, display),
      );
    },
  });
}

/** The editor's text of a file (its buffer, unsaved changes included), paged like a file on disk. */
function editorSlice(text: string, abs: string, display: string, offset: number, limit: number, limits: FsLimits) {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const all = text === "" ? [] : text.replace(/\r?\n$/, "").split(/\r?\n/);
  const s: Slice = {
    lines: [],
    first: offset,
    last: offset - 1,
    total: all.length,
    byteCapped: false,
    truncatedLines: 0,
  };
  let bytes = 0;
  for (let i = offset - 1; i < all.length && s.lines.length < limit; i++) {
    let line = all[i] as string;
    if (line.length > limits.readMaxLineChars) {
      line = `${line.slice(0, limits.readMaxLineChars)} … [line truncated: ${line.length} characters in total]`;
      s.truncatedLines++;
    }
    const formatted = numbered(i + 1, line);
    const size = Buffer.byteLength(formatted) + 1;
    if (bytes + size > limits.readMaxBytes && s.lines.length > 0) {
      s.byteCapped = true;
      break;
    }
    s.lines.push(formatted);
    s.last = i + 1;
    bytes += size;
  }
  if (all.length === 0 && offset === 1) {
    return { content: `${display} is empty (0 bytes).`, meta: { path: abs, totalLines: 0, source: "editor" } };
  }
  if (s.lines.length === 0) {
    return toolError(
      "invalid_arguments",
      `offset ${offset} is past the end of ${display}, which has ${plural(all.length, "line")}.`,
      "Use a smaller offset (lines are numbered from 1).",
    );
  }
  return {
    content: s.lines.join("\n") + footer(s, limits.readMaxLineChars),
    meta: {
      path: abs,
      startLine: s.first,
      endLine: s.last,
      totalLines: s.total,
      truncated: s.byteCapped || s.last < all.length,
      source: "editor",
    },
  } satisfies ToolResult;
}

async function readOpened(
  file: string,
  abs: string,
  display: string,
  offset: number,
  limit: number,
  limits: FsLimits,
  ctx: ToolContext,
): Promise<ToolResult> {
  let size: number;
  let head: Buffer;
  try {
    const st = await stat(file);
    if (st.isDirectory()) {
      return toolError("invalid_arguments", `${display} is a directory, not a file.`, `Use ls with path "${display}".`);
    }
    if (!st.isFile())
      return toolError("invalid_arguments", `${display} is not a regular file.`, "Read a regular file.");
    size = st.size;
    head = await readHead(file);
  } catch (err) {
    return fsFailure(err, display);
  }

  const mime = imageMime(head);
  if (mime) return readImage(file, abs, display, mime, size, limits);
  if (looksBinary(head)) {
    return toolError(
      "invalid_arguments",
      `${display} is a binary file (${formatBytes(size)}) and cannot be shown as text.`,
      "Inspect it with a shell command such as `file` or `xxd | head`, or read a text file instead.",
    );
  }
  if (ctx.editor?.read) {
    // The editor's buffer (unsaved changes included) when an editor is attached; the disk when it cannot answer.
    const text = await ctx.editor.read(abs).catch(() => undefined);
    if (text !== undefined) return editorSlice(text, abs, display, offset, limit, limits);
  }
  if (size === 0) {
    if (offset > 1) return toolError("invalid_arguments", `${display} is empty.`, "Call read without offset.");
    return { content: `${display} is empty (0 bytes).`, meta: { path: abs, totalLines: 0 } };
  }

  const slice = await readSlice(file, offset, limit, limits, ctx.signal);
  if (slice.lines.length === 0) {
    return toolError(
      "invalid_arguments",
      `offset ${offset} is past the end of ${display}, which has ${plural(slice.total ?? 0, "line")}.`,
      "Use a smaller offset (lines are numbered from 1).",
    );
  }
  return {
    content: slice.lines.join("\n") + footer(slice, limits.readMaxLineChars),
    meta: {
      path: abs,
      startLine: slice.first,
      endLine: slice.last,
      totalLines: slice.total,
      truncated: slice.byteCapped || slice.total === undefined || slice.last < slice.total,
    },
  };
}
