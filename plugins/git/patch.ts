/** Parsing of `git diff -p` output into per-file chunks and hunks. */

export interface DiffLine {
  type: "+" | "-" | " ";
  content: string;
}

export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** The text after the second `@@` (usually the enclosing function), "" when none. */
  header: string;
  lines: DiffLine[];
}

export interface ParsedChunk {
  /** The `diff --git a/... b/...` line. */
  header: string;
  binary: boolean;
  hunks: Hunk[];
  /** Lines or characters were dropped (line budget, very long lines, or the patch output was cut). */
  truncated: boolean;
}

/** Shared across all files of one diff, so the whole answer stays bounded. */
export interface LineBudget {
  remaining: number;
  /** Characters kept per line at most. */
  maxLineChars: number;
}

const HUNK_RE = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$/;

/**
 * Splits patch output at its `diff --git ` lines. Every content line of a hunk starts with "+", "-", " " or "\",
 * so a line starting with "diff --git " is always a file header, whatever the files contain.
 */
export function splitPatch(text: string): string[][] {
  const chunks: string[][] = [];
  let current: string[] | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("diff --git ")) {
      current = [line];
      chunks.push(current);
    } else if (current) {
      current.push(line);
    }
  }
  return chunks;
}

export function parseChunk(lines: string[], budget: LineBudget, cut: boolean): ParsedChunk {
  const out: ParsedChunk = { header: lines[0] ?? "", binary: false, hunks: [], truncated: cut };
  let hunk: Hunk | undefined;
  let oldLeft = 0;
  let newLeft = 0;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if (hunk && (oldLeft > 0 || newLeft > 0)) {
      const kind = line[0];
      if (kind === "\\") continue; // "\ No newline at end of file"
      const type: DiffLine["type"] = kind === "+" ? "+" : kind === "-" ? "-" : " ";
      if (type !== "+") oldLeft--;
      if (type !== "-") newLeft--;
      if (budget.remaining <= 0) {
        out.truncated = true;
        continue;
      }
      budget.remaining--;
      let content = line.slice(1);
      if (content.length > budget.maxLineChars) {
        content = content.slice(0, budget.maxLineChars);
        out.truncated = true;
      }
      hunk.lines.push({ type, content });
      continue;
    }
    const m = HUNK_RE.exec(line);
    if (m) {
      hunk = {
        oldStart: Number(m[1]),
        oldLines: m[2] === undefined ? 1 : Number(m[2]),
        newStart: Number(m[3]),
        newLines: m[4] === undefined ? 1 : Number(m[4]),
        header: m[5] ?? "",
        lines: [],
      };
      oldLeft = hunk.oldLines;
      newLeft = hunk.newLines;
      out.hunks.push(hunk);
      continue;
    }
    if (!hunk && (line.startsWith("Binary files ") || line === "GIT binary patch")) out.binary = true;
  }
  // A hunk that did not get all its lines was cut off with the output.
  if (oldLeft > 0 || newLeft > 0) out.truncated = true;
  // Hunks emptied by the line budget are dropped rather than shown hollow.
  out.hunks = out.hunks.filter((h) => h.lines.length > 0 || (h.oldLines === 0 && h.newLines === 0));
  return out;
}

/** The whole content of a new file as one all-added hunk (untracked files). */
export function addedFileHunk(
  text: string,
  budget: LineBudget,
): { hunk: Hunk | undefined; lines: number; truncated: boolean } {
  if (text === "") return { hunk: undefined, lines: 0, truncated: false };
  const all = text.split("\n");
  if (all.at(-1) === "") all.pop();
  const hunk: Hunk = { oldStart: 0, oldLines: 0, newStart: 1, newLines: all.length, header: "", lines: [] };
  let truncated = false;
  for (const line of all) {
    if (budget.remaining <= 0) {
      truncated = true;
      break;
    }
    budget.remaining--;
    const content = line.length > budget.maxLineChars ? line.slice(0, budget.maxLineChars) : line;
    if (content !== line) truncated = true;
    hunk.lines.push({ type: "+", content });
  }
  return { hunk: hunk.lines.length ? hunk : undefined, lines: all.length, truncated };
}
