import { T } from "../../core/index.js";

/** A string enum as plain JSON Schema `enum` (models handle it better than TypeBox's `anyOf` of literals). */
export function stringEnum<const V extends readonly string[]>(values: V, options: { description?: string } = {}) {
  return T.Unsafe<V[number]>({ type: "string", enum: [...values], ...options });
}

/** Shortens one entry to `max` characters on one line, so a long note or message cannot crowd out the others. */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** Joins entries until `maxChars`, then says how many were left out. */
export function joinCapped(header: string, entries: string[], maxChars: number): string {
  let out = header;
  for (let i = 0; i < entries.length; i++) {
    const next = `\n${entries[i]}`;
    if (out.length + next.length > maxChars) {
      return `${out}\n[${entries.length - i} more not shown; narrow the query or lower the limit.]`;
    }
    out += next;
  }
  return out;
}
