import { isUtf8 } from "node:buffer";
import { stat } from "node:fs/promises";
import path from "node:path";
import {
  defineTool,
  EditorGoneError,
  mkdirInside,
  readFileInside,
  T,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
  toolError,
  writeFileInside,
} from "../../core/index.js";
import { formatBytes, looksBinary, numbered, plural } from "./content.js";
import type { FsLimits } from "./limits.js";
import { resolvePath } from "./paths.js";
import { fsFailure } from "./result.js";

/** Non-overlapping occurrences, left to right. */
function occurrences(haystack: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) at.push(i);
  return at;
}

function lineOf(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

function bigrams(s: string): Set<string> {
  const set = new Set<string>();
  for (let i = 0; i < s.length - 1; i++) set.add(s.slice(i, i + 2));
  return set;
}

/** Dice similarity of character bigrams: cheap, and good at "same line, different whitespace or a typo". */
function similarity(a: string, b: string): number {
  const x = bigrams(a);
  const y = bigrams(b);
  if (x.size === 0 || y.size === 0) return a === b ? 1 : 0;
  let common = 0;
  for (const g of x) if (y.has(g)) common++;
  return (2 * common) / (x.size + y.size);
}

const MAX_HINT_SCAN_LINES = 20_000;

/** Up to three file lines resembling the longest line of the missing text, to show the model where to look. */
function nearbyHints(content: string, oldString: string): string {
  const probe = oldString
    .split("\n")
    .map((l) => l.trim())
    .reduce((best, l) => (l.length > best.length ? l : best), "");
  if (probe.length < 3) return "";
  const lines = content.split("\n").slice(0, MAX_HINT_SCAN_LINES);
  const scored = lines
    .map((text, i) => ({ n: i + 1, text, score: similarity(text.trim(), probe) }))
    .filter((c) => c.score >= 0.5)
    .sort((a, b) => b.score - a.score || a.n - b.n)
    .slice(0, 3)
    .sort((a, b) => a.n - b.n);
  if (scored.length === 0) return "";
  const shown = scored.map((c) => numbered(c.n, c.text.length > 300 ? `${c.text.slice(0, 300)} …` : c.text));
  return `\nSimilar lines in the file:\n${shown.join("\n")}`;
}

function snippet(text: string, firstLine: number, lastLine: number): string {
  const lines = text.split("\n");
  const from = Math.max(1, firstLine - 2);
  const to = Math.min(lines.length, lastLine + 2, from + 19);
  const out: string[] = [];
  for (let n = from; n <= to; n++) out.push(numbered(n, lines[n - 1] ?? ""));
  return out.join("\n");
}

export function createEditTool(limits: FsLimits): ToolDefinition {
  return defineTool({
    name: "edit",
    description:
      "Replace an exact string in a file. oldString must match the file exactly (including indentation) and, " +
      "unless replaceAll is true, exactly once: include enough surrounding lines to make it unique. Read the file " +
      "first. An empty oldString creates a new file with newString as its content. " +
      "In plan mode only files inside the session's plans directory can be edited.",
    parameters: T.Object(
      {
        filePath: T.String({ minLength: 1, description: "File path, relative to the working directory or absolute." }),
        oldString: T.String({ description: "The exact text to replace (empty to create a new file)." }),
        newString: T.String({ description: "The replacement text (must differ from oldString)." }),
        replaceAll: T.Optional(T.Boolean({ description: "Replace every occurrence instead of exactly one." })),
      },
      { additionalProperties: false },
    ),
    async execute(args, ctx) {
      const input = args.filePath;
      let oldString = args.oldString;
      let newString = args.newString;
      const replaceAll = args.replaceAll ?? false;
      if (oldString === newString) {
        return toolError(
          "invalid_arguments",
          "oldString and newString are identical; the edit would change nothing.",
          "Pass the text you want in newString.",
        );
      }
      const resolved = await resolvePath(ctx, input, "write");
      if (!resolved.ok) return resolved.result;
      const { abs, display, roots } = resolved.path;

      let content: string;
      let encoding: BufferEncoding = "utf8";
      try {
        const st = await stat(abs).catch((err: NodeJS.ErrnoException) => {
          if (err.code === "ENOENT") return undefined;
          throw err;
        });
        if (!st) {
          if (oldString !== "") {
            return toolError(
              "not_found",
              `${display} does not exist.`,
              "Check the path with glob, or create the file with write.",
            );
          }
          await mkdirInside(roots, path.dirname(abs));
          const written = await writeResult(
            { abs, roots, display, updated: newString, encoding: "utf8", first: 1, last: 1 },
            "created",
            ctx,
          );
          if (written.isError) return written;
          const created = `Created ${display} (${plural(Buffer.byteLength(newString), "byte")}).`;
          return { content: created, meta: { path: abs, created: true } };
        }
        if (st.isDirectory())
          return toolError("invalid_arguments", `${display} is a directory.`, "Edit a file inside it.");
        if (!st.isFile()) {
          return toolError(
            "invalid_arguments",
            `${display} is not a regular file (a device, socket or pipe).`,
            "Edit regular files only.",
          );
        }
        if (st.size > limits.editMaxFileBytes) {
          return toolError(
            "too_large",
            `${display} is ${formatBytes(st.size)}; edit handles files up to ${formatBytes(limits.editMaxFileBytes)}.`,
            "Use a shell tool (sed, a script) for files this large.",
          );
        }
        const raw = await readFileInside(roots, abs, ctx.signal);
        if (looksBinary(raw))
          return toolError("invalid_arguments", `${display} is a binary file.`, "Edit text files only.");
        // A UTF-8 decode/encode round trip would replace every invalid byte (a Latin-1 file, a stray byte) with
        // U+FFFD all over the file. Latin-1 maps each byte to one character, so the untouched parts stay byte-exact.
        if (!isUtf8(raw)) {
          encoding = "latin1";
          oldString = Buffer.from(oldString, "utf8").toString("latin1");
          newString = Buffer.from(newString, "utf8").toString("latin1");
        }
        content = raw.toString(encoding);
        // The editor's buffer (unsaved changes included) is what gets edited when an editor is attached.
        if (encoding === "utf8" && ctx.editor?.read) {
          content = (await ctx.editor.read(abs).catch(() => undefined)) ?? content;
        }
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        return fsFailure(err, display);
      }

      if (oldString === "") {
        if (content !== "") {
          return toolError(
            "invalid_arguments",
            `${display} already exists and is not empty; an empty oldString only creates files.`,
            "Pass the exact text to replace, or use write to replace the whole file.",
          );
        }
        return writeResult(
          { abs, roots, display, updated: newString, encoding, first: 1, last: 1 },
          "filled the empty file",
          ctx,
        );
      }

      let at = occurrences(content, oldString);
      // Models usually send "\n"; a CRLF file would otherwise never match.
      if (at.length === 0 && content.includes("\r\n") && oldString.includes("\n") && !oldString.includes("\r\n")) {
        const crlf = oldString.replace(/\n/g, "\r\n");
        const found = occurrences(content, crlf);
        if (found.length > 0) {
          oldString = crlf;
          newString = newString.replace(/\r?\n/g, "\r\n");
          at = found;
        }
      }
      if (at.length === 0) {
        return toolError(
          "not_found",
          `oldString was not found in ${display}.${nearbyHints(content, oldString)}`,
          "Read the file again and copy the exact text, including whitespace and indentation.",
        );
      }
      if (at.length > 1 && !replaceAll) {
        const lines = at.slice(0, 10).map((i) => lineOf(content, i));
        return toolError(
          "conflict",
          `oldString matches ${at.length} places in ${display} (lines ${lines.join(", ")}${at.length > 10 ? ", …" : ""}).`,
          "Include more surrounding lines in oldString so it matches once, or set replaceAll to true to change all of them.",
        );
      }

      const pieces: string[] = [];
      let prev = 0;
      for (const i of at) {
        pieces.push(content.slice(prev, i), newString);
        prev = i + oldString.length;
      }
      pieces.push(content.slice(prev));
      const updated = pieces.join("");
      const first = lineOf(content, at[0] ?? 0);
      const last = first + newString.split("\n").length - 1;
      const summary = `replaced ${plural(at.length, "occurrence")}`;
      return writeResult({ abs, roots, display, updated, encoding, first, last }, summary, ctx);
    },
  });
}

interface Edited {
  abs: string;
  roots: string[];
  display: string;
  updated: string;
  encoding: BufferEncoding;
  first: number;
  last: number;
}

async function writeResult(e: Edited, summary: string, ctx: ToolContext): Promise<ToolResult> {
  ctx.signal.throwIfAborted();
  try {
    // Through the editor when one is attached (its buffer is updated too); on the disk when it is gone.
    const viaEditor =
      e.encoding === "utf8" && ctx.editor?.write
        ? await ctx.editor.write(e.abs, e.updated).then(
            () => "written" as const,
            (err: Error) => (err instanceof EditorGoneError ? ("gone" as const) : err.message),
          )
        : "gone";
    if (viaEditor === "gone") await writeFileInside(e.roots, e.abs, Buffer.from(e.updated, e.encoding));
    else if (viaEditor !== "written") {
      return toolError("permission_denied", `The editor did not write ${e.display}: ${viaEditor}`, "Ask the user.");
    }
  } catch (err) {
    return fsFailure(err, e.display);
  }
  let shown = snippet(e.updated, e.first, e.last);
  if (e.encoding === "latin1") shown = Buffer.from(shown, "latin1").toString("utf8");
  return {
    content: `Edited ${e.display}: ${summary}. Around line ${e.first} now:\n${shown}`,
    meta: { path: e.abs, firstLine: e.first },
  };
}
