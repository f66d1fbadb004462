import { formatBytes } from "./content.js";
import type { FsLimits } from "./limits.js";
import type { Line, Verdict } from "./scan.js";

export const MODES = ["content", "files_with_matches", "count"] as const;
export type Mode = (typeof MODES)[number];

export interface Search {
  regex: RegExp;
  /** The pattern for ripgrep to narrow the files with (undefined: every file is searched). */
  prefilter: string | undefined;
  ignoreCase: boolean;
  /** The same pattern with "m": finds nothing in a run of lines exactly when no single line matches (or more). */
  multiline: RegExp;
  mode: Mode;
  before: number;
  after: number;
  limit: number;
  limits: FsLimits;
}

/** The output under the match and byte caps. `limitHit` is set only when a match beyond the limit was seen. */
export class Output {
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
export class FileSearch {
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
