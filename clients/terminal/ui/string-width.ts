/**
 * string-width as the terminal UI's bundle uses it (scripts/bundle-terminal.ts routes Ink's imports of string-width
 * here): a string of printable ASCII, colour codes and the glyphs the client draws, each of which string-width
 * measures as one column (test/terminal-units.test.ts), is measured by its length without the colour codes; any
 * other string goes to string-width. Its first string with a character outside ASCII costs ~80 ms on this machine
 * (a grapheme segmenter's data and V8's compile of its emoji pattern), which the first screen would otherwise pay
 * for its own `›` and `·`.
 */
import stringWidth, { type Options } from "string-width";

/** One column each, alone or next to each other and to ASCII (no combining marks, variation selectors or joiners). */
export const CLIENT_GLYPHS = "·…›─▸❯↑↓∴✓✗⚠●⎇☑◐☒☐⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";
const NARROW = new RegExp(`^[\\x20-\\x7E${CLIENT_GLYPHS}]*$`);
const ESC = "\x1b";
/** Select Graphic Rendition (colours, bold, inverse): zero columns, and removed by string-width too. */
const SGR = new RegExp(`${ESC}\\[[0-9;]*m`, "g");

export default function width(s: string, options?: Options): number {
  if (typeof s === "string" && options?.ambiguousIsNarrow !== false && !options?.countAnsiEscapeCodes) {
    const visible = s.includes(ESC) ? s.replace(SGR, "") : s;
    if (NARROW.test(visible)) return visible.length;
  }
  return stringWidth(s, options);
}
