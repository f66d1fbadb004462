/**
 * The order every search lists paths in, on both engines: depth first, the entries of a directory by name in byte
 * (code point) order, as `rg --sort path` and the JavaScript walk produce them. "a/b" comes before "a.txt".
 */
export function compareNames(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** UTF-16 code units ranked as UTF-8 bytes order them: surrogates (astral characters) above the rest of the BMP. */
function codePointRank(c: number): number {
  if (c >= 0xd800 && c < 0xe000) return c + 0x2000;
  if (c >= 0xe000) return c - 0x800;
  return c;
}

/**
 * Compares "/"-separated relative paths component by component (see compareNames), without splitting them: the end
 * of a component ("/") ranks below every character, so "a/b" comes before "a.txt" as "a" comes before "a.txt".
 */
export function comparePaths(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x === SLASH) return -1;
    if (y === SLASH) return 1;
    return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

const SLASH = 0x2f;
