import path from "node:path";

/**
 * True when `p` is `root` itself or lies below it. Both must be absolute and normalised (`path.resolve`, or
 * `realpath` when symbolic links matter); no I/O. The one containment check of agentd and its plugins.
 */
export function isInside(root: string, p: string): boolean {
  if (p === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return p.startsWith(prefix);
}

/**
 * The bounds of the paths `isInside(root, p)` accepts, for an index range on text compared byte by byte (SQLite's
 * default, PostgreSQL's `COLLATE "C"`): every such path is `root` itself or starts with `prefix`, and all of them
 * sort in [root, end). `end` is `prefix` with its last character (the separator) replaced by the next one.
 */
export function directoryRange(root: string): { prefix: string; end: string } {
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return { prefix, end: prefix.slice(0, -1) + String.fromCharCode(path.sep.charCodeAt(0) + 1) };
}

/** `p` and every directory above it up to the root, nearest first (lexical; `p` absolute and normalised). */
export function pathAndAncestors(p: string): string[] {
  const out = [p];
  for (let cur = p, up = path.dirname(p); up !== cur; cur = up, up = path.dirname(up)) out.push(up);
  return out;
}

/**
 * `input` resolved against `root` (an absolute input as it is), or undefined when the result leaves `root`.
 * Lexical only: a symbolic link below `root` may still point outside, so realpath the result before trusting it
 * for I/O (or open it with `core/confined-fs`).
 */
export function resolveInside(root: string, input: string): string | undefined {
  const abs = path.resolve(root, input);
  return isInside(path.resolve(root), abs) ? abs : undefined;
}
