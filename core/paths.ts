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
 * `input` resolved against `root` (an absolute input as it is), or undefined when the result leaves `root`.
 * Lexical only: a symbolic link below `root` may still point outside, so realpath the result before trusting it
 * for I/O (or open it with `core/confined-fs`).
 */
export function resolveInside(root: string, input: string): string | undefined {
  const abs = path.resolve(root, input);
  return isInside(path.resolve(root), abs) ? abs : undefined;
}
