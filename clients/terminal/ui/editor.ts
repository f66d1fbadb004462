/** Pure editing operations of the multi-line composer: a text and a cursor (an index into the text). */
export interface Edit {
  text: string;
  cursor: number;
}

export const empty: Edit = { text: "", cursor: 0 };

export function insert(e: Edit, s: string): Edit {
  return { text: e.text.slice(0, e.cursor) + s + e.text.slice(e.cursor), cursor: e.cursor + s.length };
}

export function backspace(e: Edit): Edit {
  if (e.cursor === 0) return e;
  return { text: e.text.slice(0, e.cursor - 1) + e.text.slice(e.cursor), cursor: e.cursor - 1 };
}

export function del(e: Edit): Edit {
  if (e.cursor >= e.text.length) return e;
  return { text: e.text.slice(0, e.cursor) + e.text.slice(e.cursor + 1), cursor: e.cursor };
}

export function left(e: Edit): Edit {
  return { ...e, cursor: Math.max(0, e.cursor - 1) };
}

export function right(e: Edit): Edit {
  return { ...e, cursor: Math.min(e.text.length, e.cursor + 1) };
}

const lineStart = (e: Edit) => e.text.lastIndexOf("\n", e.cursor - 1) + 1;
const lineEnd = (e: Edit) => {
  const i = e.text.indexOf("\n", e.cursor);
  return i === -1 ? e.text.length : i;
};

export function home(e: Edit): Edit {
  return { ...e, cursor: lineStart(e) };
}

export function end(e: Edit): Edit {
  return { ...e, cursor: lineEnd(e) };
}

export function onFirstLine(e: Edit): boolean {
  return !e.text.slice(0, e.cursor).includes("\n");
}

export function onLastLine(e: Edit): boolean {
  return !e.text.slice(e.cursor).includes("\n");
}

/** Moves the cursor one line up or down, keeping the column where possible. */
export function vertical(e: Edit, dir: -1 | 1): Edit {
  const start = lineStart(e);
  const col = e.cursor - start;
  if (dir < 0) {
    if (start === 0) return e;
    const prevStart = e.text.lastIndexOf("\n", start - 2) + 1;
    return { ...e, cursor: Math.min(prevStart + col, start - 1) };
  }
  const endI = lineEnd(e);
  if (endI >= e.text.length) return e;
  const nextStart = endI + 1;
  const nextEnd = e.text.indexOf("\n", nextStart);
  return { ...e, cursor: Math.min(nextStart + col, nextEnd === -1 ? e.text.length : nextEnd) };
}

/** Deletes the word before the cursor (Ctrl+W). */
export function deleteWord(e: Edit): Edit {
  const before = e.text.slice(0, e.cursor);
  const m = before.match(/\S+\s*$/);
  const from = m ? e.cursor - m[0].length : Math.max(0, e.cursor - 1);
  return { text: e.text.slice(0, from) + e.text.slice(e.cursor), cursor: from };
}

/** Deletes from the start of the line to the cursor (Ctrl+U). */
export function deleteToLineStart(e: Edit): Edit {
  const s = lineStart(e);
  if (s === e.cursor && s > 0) return backspace(e);
  return { text: e.text.slice(0, s) + e.text.slice(e.cursor), cursor: s };
}

/** The `@path` (or `@`) being typed at the cursor, with where it starts. */
export function atToken(e: Edit): { start: number; query: string } | undefined {
  const m = e.text.slice(0, e.cursor).match(/(^|\s)@([^\s@]*)$/);
  if (!m) return undefined;
  const query = m[2] ?? "";
  return { start: e.cursor - query.length - 1, query };
}

/** Replaces the `@token` at the cursor with `@value`. */
export function replaceAt(e: Edit, start: number, value: string): Edit {
  const text = `${e.text.slice(0, start)}@${value} ${e.text.slice(e.cursor)}`;
  return { text, cursor: start + value.length + 2 };
}

const PASTE_LINES = 4;
const PASTE_CHARS = 400;

/** Whether pasted text is long enough to be shown collapsed as a chip. */
export function isLongPaste(s: string): boolean {
  return s.split("\n").length > PASTE_LINES || s.length > PASTE_CHARS;
}

export function chipLabel(n: number, s: string): string {
  const lines = s.split("\n").length;
  return `[Pasted text #${n} +${lines} lines]`;
}

/** The text to send: each chip replaced by the text it stands for. */
export function expandChips(text: string, chips: ReadonlyMap<string, string>): string {
  let out = text;
  for (const [label, value] of chips) out = out.split(label).join(value);
  return out;
}
