import { open } from "node:fs/promises";
import { looksBinary } from "./content.js";

export interface Line {
  /** 1-based line number. */
  n: number;
  /** The line without its end of line, decoded as UTF-8 (invalid bytes become U+FFFD). */
  text: string;
  /** The line's full length in bytes; more than the bytes in `text` when the line was cut at the cap. */
  bytes: number;
}

/** What to do after a line: keep reading, or stop this file. */
export type Verdict = "more" | "stop";

/**
 * Streams a file line by line in fixed chunks, so a 50 MB log costs one chunk plus one line of memory. A line
 * longer than `maxLineBytes` is passed on cut at that length (the rest is skipped, never buffered). Returns
 * "binary" without calling `onLine` when the first chunk holds a NUL byte, unless `binary` is "search".
 */
export async function scanLines(
  file: string,
  chunkBytes: number,
  maxLineBytes: number,
  signal: AbortSignal,
  onLine: (line: Line) => Verdict,
  skippable?: (wholeLines: Buffer, firstLine: number, lineCount: number) => boolean,
  binary: "skip" | "search" = "skip",
): Promise<"done" | "stopped" | "binary"> {
  const fh = await open(file, "r");
  try {
    const buf = Buffer.alloc(chunkBytes);
    let parts: Buffer[] = [];
    let kept = 0;
    let lineBytes = 0;
    let n = 1;
    let first = true;
    const finish = (chunk: Buffer, from: number, to: number): Verdict => {
      let text: string;
      if (parts.length === 0) {
        text = chunk.toString("utf8", from, Math.min(to, from + maxLineBytes));
      } else {
        if (kept < maxLineBytes) parts.push(chunk.subarray(from, Math.min(to, from + maxLineBytes - kept)));
        text = Buffer.concat(parts).toString("utf8");
      }
      const bytes = lineBytes + (to - from);
      if (text.endsWith("\r")) text = text.slice(0, -1);
      if (n === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      const verdict = onLine({ n: n++, text, bytes });
      parts = [];
      kept = 0;
      lineBytes = 0;
      return verdict;
    };
    for (;;) {
      signal.throwIfAborted();
      const { bytesRead } = await fh.read(buf, 0, chunkBytes, null);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      // A BOM would hide a "^" match on line 1 from the fast path; such a first chunk takes the line-by-line path.
      let fast = skippable !== undefined;
      if (first) {
        first = false;
        if (binary === "skip" && looksBinary(chunk)) return "binary";
        if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) fast = false;
      }
      let pos = 0;
      if (parts.length > 0) {
        const nl = chunk.indexOf(10);
        if (nl !== -1) {
          if (finish(chunk, 0, nl) === "stop") return "stopped";
          pos = nl + 1;
        }
      }
      // Fast path: a run of whole lines the caller can prove uninteresting is only counted, never split.
      const lastNl = chunk.lastIndexOf(10);
      if (fast && skippable && lastNl >= pos) {
        let count = 0;
        for (let nl = chunk.indexOf(10, pos); nl !== -1 && nl <= lastNl; nl = chunk.indexOf(10, nl + 1)) count++;
        if (skippable(chunk.subarray(pos, lastNl + 1), n, count)) {
          n += count;
          pos = lastNl + 1;
        }
      }
      for (let nl = chunk.indexOf(10, pos); nl !== -1; nl = chunk.indexOf(10, pos)) {
        if (finish(chunk, pos, nl) === "stop") return "stopped";
        pos = nl + 1;
      }
      // An unfinished line: keep (a copy of) at most the capped prefix; the chunk buffer is reused.
      if (pos < chunk.length) {
        if (kept < maxLineBytes) {
          const piece = Buffer.from(chunk.subarray(pos, Math.min(chunk.length, pos + maxLineBytes - kept)));
          parts.push(piece);
          kept += piece.length;
        }
        lineBytes += chunk.length - pos;
      }
    }
    if (lineBytes > 0 && finish(Buffer.alloc(0), 0, 0) === "stop") return "stopped";
    return "done";
  } finally {
    await fh.close();
  }
}
