import type { Redirect, Script, Word } from "./ast.js";

/**
 * The lexical half of the shell parser: blanks and comments, operators, reserved-word lookahead, quoting,
 * expansions and here-document bodies. Words are built here; substitutions inside them are handed back to the
 * grammar (`parseScript`) so that `$( )`, backticks and `<( )` come out as parsed scripts.
 */

export class ShellSyntaxError extends Error {
  constructor(
    readonly detail: string,
    readonly offset: number,
  ) {
    super(`${detail} (at character ${offset})`);
    this.name = "ShellSyntaxError";
  }
}

/** Deeper nesting than this is refused rather than risking the stack on hostile input. */
const MAX_DEPTH = 64;
const META = new Set([" ", "\t", "\n", ";", "&", "|", "(", ")", "<", ">"]);
const QUOTING = new Set(["'", '"', "\\", "$", "`"]);
/** Longest first, so `;;&` wins over `;;` and `;`. */
const OPERATORS = [
  ";;&",
  ";;",
  ";&",
  "&&",
  "||",
  "|&",
  "&>>",
  "&>",
  "<<<",
  "<<-",
  "<<",
  "<>",
  "<&",
  ">&",
  ">>",
  ">|",
  "<(",
  ">(",
  "<",
  ">",
  "|",
  "&",
  ";",
  "(",
  ")",
  "\n",
];
export const REDIRECT_OPS = new Set<string>(["&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">&", ">>", ">|", "<", ">"]);
export const CASE_END = new Set([";;", ";&", ";;&"]);
const ARRAY_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=$/;

export interface Stop {
  /** Reserved words that end the list (`then`, `fi`, `}`...). */
  words?: readonly string[];
  /** `)` ends the list (subshell, `$( )`). */
  paren?: boolean;
  /** `;;`, `;&`, `;;&` end the list (a case arm). */
  caseArm?: boolean;
}

interface PendingHeredoc {
  redirect: Redirect;
  delimiter: string;
  stripTabs: boolean;
  literal: boolean;
}

class WordBuilder {
  value = "";
  quoted = false;
  dynamic = false;
  glob = false;
  procSubst = false;
  readonly subs: Script[] = [];

  absorb(w: { dynamic: boolean; procSubst: boolean; subs: Script[] }): void {
    this.dynamic ||= w.dynamic;
    this.procSubst ||= w.procSubst;
    this.subs.push(...w.subs);
  }

  finish(raw: string): Word {
    const { value, quoted, dynamic, glob, subs, procSubst } = this;
    return { raw, value, quoted, dynamic, glob, subs, procSubst };
  }
}

export function literalWord(text: string): Word {
  return { raw: text, value: text, quoted: true, dynamic: false, glob: false, subs: [], procSubst: false };
}

const ANSI_ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

export abstract class Scanner {
  protected pos = 0;
  protected level: number;
  protected pending: PendingHeredoc[] = [];

  constructor(
    protected readonly src: string,
    depth: number,
  ) {
    this.level = depth;
    if (depth > MAX_DEPTH) throw new ShellSyntaxError("the command nests too deeply", 0);
  }

  /** Parses a list of commands up to a terminator (the grammar half). */
  protected abstract parseScript(stop: Stop): Script;

  /** A parser for text that is parsed on its own (backquoted commands, here-document bodies). */
  protected abstract child(src: string, depth: number): Scanner & { parseAll(): Script };

  /* ---------- low-level scanning ---------- */

  protected ch(offset = 0): string {
    return this.src[this.pos + offset] ?? "";
  }

  protected at(s: string): boolean {
    return this.src.startsWith(s, this.pos);
  }

  protected eof(): boolean {
    return this.pos >= this.src.length;
  }

  protected error(detail: string): ShellSyntaxError {
    return new ShellSyntaxError(detail, this.pos);
  }

  protected describeNext(): string {
    if (this.eof()) return "end of input";
    const op = this.peekOp();
    if (op) return op === "\n" ? "newline" : `"${op}"`;
    return `"${this.src.slice(this.pos, this.pos + 12)}"`;
  }

  /** Skips blanks, line continuations and a comment (comments only start at a token boundary, i.e. here). */
  protected skipBlanks(): void {
    for (;;) {
      const c = this.ch();
      if (c === " " || c === "\t") this.pos++;
      else if (c === "\\" && this.ch(1) === "\n") this.pos += 2;
      else if (c === "#") {
        while (!this.eof() && this.ch() !== "\n") this.pos++;
      } else return;
    }
  }

  protected skipNewlines(): void {
    for (;;) {
      this.skipBlanks();
      if (this.ch() !== "\n") return;
      this.pos++;
      this.readHeredocs();
    }
  }

  protected peekOp(): string | undefined {
    const c = this.ch();
    if (!c || !META.has(c) || c === " " || c === "\t") return undefined;
    return OPERATORS.find((op) => this.at(op));
  }

  /** The unquoted word at the cursor when it stands alone (how reserved words are recognised). */
  protected peekBareWord(): string | undefined {
    let end = this.pos;
    while (end < this.src.length && !META.has(this.src[end]) && !QUOTING.has(this.src[end])) end++;
    if (end === this.pos) return undefined;
    const next = this.src[end];
    if (next !== undefined && !META.has(next)) return undefined;
    return this.src.slice(this.pos, end);
  }

  protected expectWord(word: string): void {
    this.skipBlanks();
    if (this.peekBareWord() !== word) throw this.error(`expected "${word}", found ${this.describeNext()}`);
    this.pos += word.length;
  }

  protected expectOp(op: string): void {
    this.skipBlanks();
    if (!this.at(op)) throw this.error(`expected "${op}", found ${this.describeNext()}`);
    this.pos += op.length;
  }

  protected nested<T>(fn: () => T): T {
    if (++this.level > MAX_DEPTH) throw this.error("the command nests too deeply");
    try {
      return fn();
    } finally {
      this.level--;
    }
  }

  /** Here-document bodies start after the newline that ends the line holding their `<<`. */
  protected readHeredocs(): void {
    const pending = this.pending;
    this.pending = [];
    for (const h of pending) {
      let body = "";
      while (!this.eof()) {
        let end = this.src.indexOf("\n", this.pos);
        if (end < 0) end = this.src.length;
        let line = this.src.slice(this.pos, end);
        this.pos = Math.min(end + 1, this.src.length);
        if (h.stripTabs) line = line.replace(/^\t+/, "");
        if (line === h.delimiter) break;
        body += `${line}\n`;
      }
      h.redirect.heredoc = h.literal ? literalWord(body) : this.heredocWord(body);
    }
  }

  protected heredocWord(body: string): Word {
    const inner = this.child(body, this.level + 1);
    const b = new WordBuilder();
    inner.readDoubleQuoted(b, null);
    return b.finish(body);
  }

  /* ---------- words ---------- */

  protected readWord(): Word {
    const start = this.pos;
    const b = new WordBuilder();
    for (;;) {
      const c = this.ch();
      if (c === "") break;
      if (META.has(c)) {
        if ((c === "<" || c === ">") && this.ch(1) === "(") {
          this.readProcSubst(b);
          continue;
        }
        if (c === "(" && !b.quoted && ARRAY_ASSIGNMENT.test(this.src.slice(start, this.pos))) {
          this.readArrayLiteral(b);
          continue;
        }
        break;
      }
      switch (c) {
        case "\\":
          if (this.ch(1) === "\n") this.pos += 2;
          else if (this.pos + 1 < this.src.length) {
            b.value += this.ch(1);
            b.quoted = true;
            this.pos += 2;
          } else {
            b.value += c;
            this.pos++;
          }
          break;
        case "'":
          this.readSingleQuoted(b);
          break;
        case '"':
          this.pos++;
          b.quoted = true;
          this.readDoubleQuoted(b, '"');
          break;
        case "$":
          this.readDollar(b, false);
          break;
        case "`":
          this.readBacktick(b);
          break;
        case "*":
        case "?":
        case "[":
          b.glob = true;
          b.value += c;
          this.pos++;
          break;
        default:
          b.value += c;
          this.pos++;
      }
    }
    if (this.pos === start) throw this.error(`expected a word, found ${this.describeNext()}`);
    return b.finish(this.src.slice(start, this.pos));
  }

  protected readSingleQuoted(b: WordBuilder): void {
    const end = this.src.indexOf("'", this.pos + 1);
    if (end < 0) throw this.error("unterminated single quote");
    b.value += this.src.slice(this.pos + 1, end);
    b.quoted = true;
    this.pos = end + 1;
  }

  /** Double-quoted text up to `end`, or (end = null) a here-document body up to the end of the input. */
  protected readDoubleQuoted(b: WordBuilder, end: '"' | null): void {
    for (;;) {
      if (this.eof()) {
        if (end === null) return;
        throw this.error("unterminated double quote");
      }
      const c = this.ch();
      if (c === end) {
        this.pos++;
        return;
      }
      if (c === "\\") {
        const n = this.ch(1);
        if (n === "\n") this.pos += 2;
        else if (n === "$" || n === "`" || n === "\\" || (n === '"' && end === '"')) {
          b.value += n;
          this.pos += 2;
        } else {
          b.value += c;
          this.pos++;
        }
      } else if (c === "$") this.readDollar(b, true);
      else if (c === "`") this.readBacktick(b);
      else {
        b.value += c;
        this.pos++;
      }
    }
  }

  protected readDollar(b: WordBuilder, inDoubleQuotes: boolean): void {
    const start = this.pos;
    const n = this.ch(1);
    if (n === "(") {
      if (this.ch(2) === "(") {
        const arith = this.tryArith(3);
        if (arith) {
          b.absorb(arith);
          b.value += arith.raw;
          return;
        }
      }
      this.pos += 2;
      b.subs.push(this.parseSubstitution("$("));
      b.dynamic = true;
      b.value += this.src.slice(start, this.pos);
      return;
    }
    if (n === "{") {
      this.readBraced(b, inDoubleQuotes);
      return;
    }
    if (!inDoubleQuotes && n === "'") {
      this.readAnsiC(b);
      return;
    }
    if (!inDoubleQuotes && n === '"') {
      this.pos += 2;
      b.quoted = true;
      this.readDoubleQuoted(b, '"');
      return;
    }
    let end = this.pos + 1;
    if (/[A-Za-z_]/.test(n)) {
      while (/[A-Za-z0-9_]/.test(this.src[end] ?? "")) end++;
    } else if (n !== "" && "0123456789@*#?$!-".includes(n)) end++;
    if (end > this.pos + 1) b.dynamic = true;
    b.value += this.src.slice(this.pos, end);
    this.pos = end;
  }

  protected parseSubstitution(opener: string): Script {
    return this.nested(() => {
      const script = this.parseScript({ paren: true });
      this.skipNewlines();
      if (this.ch() !== ")") throw this.error(`unterminated ${opener}`);
      this.pos++;
      return script;
    });
  }

  protected readProcSubst(b: WordBuilder): void {
    const start = this.pos;
    this.pos += 2;
    b.subs.push(this.parseSubstitution(this.src.slice(start, start + 2)));
    b.procSubst = true;
    b.dynamic = true;
    b.value += this.src.slice(start, this.pos);
  }

  /** `$((...))` / `((...))` when the parentheses balance as arithmetic; undefined (cursor restored) otherwise. */
  protected tryArith(openLen: number): Word | undefined {
    const start = this.pos;
    this.pos += openLen;
    const b = new WordBuilder();
    let depth = 0;
    try {
      while (!this.eof()) {
        const c = this.ch();
        if (c === "(") depth++;
        else if (c === ")") {
          if (depth === 0) {
            if (this.ch(1) !== ")") break;
            this.pos += 2;
            b.dynamic = true;
            const raw = this.src.slice(start, this.pos);
            b.value = raw;
            return b.finish(raw);
          }
          depth--;
        } else if (c === "$") {
          this.readDollar(b, true);
          continue;
        } else if (c === "`") {
          this.readBacktick(b);
          continue;
        } else if (c === '"') {
          this.pos++;
          this.readDoubleQuoted(b, '"');
          continue;
        } else if (c === "\\") this.pos++;
        this.pos++;
      }
    } catch (err) {
      if (!(err instanceof ShellSyntaxError)) throw err;
    }
    this.pos = start;
    return undefined;
  }

  protected readBraced(b: WordBuilder, inDoubleQuotes: boolean): void {
    const start = this.pos;
    const inner = new WordBuilder();
    this.pos += 2;
    for (;;) {
      if (this.eof()) throw this.error("unterminated ${");
      const c = this.ch();
      if (c === "}") {
        this.pos++;
        break;
      }
      if (c === "\\") this.pos += 2;
      else if (c === "'" && !inDoubleQuotes) {
        const end = this.src.indexOf("'", this.pos + 1);
        if (end < 0) throw this.error("unterminated single quote");
        this.pos = end + 1;
      } else if (c === '"') {
        this.pos++;
        this.readDoubleQuoted(inner, '"');
      } else if (c === "$") this.readDollar(inner, true);
      else if (c === "`") this.readBacktick(inner);
      else this.pos++;
    }
    b.absorb(inner);
    b.dynamic = true;
    b.value += this.src.slice(start, this.pos);
  }

  protected readAnsiC(b: WordBuilder): void {
    this.pos += 2;
    let out = "";
    for (;;) {
      if (this.eof()) throw this.error("unterminated $'");
      const c = this.ch();
      if (c === "'") {
        this.pos++;
        break;
      }
      if (c !== "\\") {
        out += c;
        this.pos++;
        continue;
      }
      const n = this.ch(1);
      const numeric = /^(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3})/.exec(
        this.src.slice(this.pos + 1, this.pos + 11),
      );
      if (numeric) {
        const e = numeric[0];
        const code = /^[0-7]/.test(e) ? Number.parseInt(e, 8) : Number.parseInt(e.slice(1), 16);
        out += code <= 0x10ffff ? String.fromCodePoint(code) : "";
        this.pos += 1 + e.length;
      } else if (n in ANSI_ESCAPES) {
        out += ANSI_ESCAPES[n];
        this.pos += 2;
      } else {
        out += c + n;
        this.pos += n ? 2 : 1;
      }
    }
    b.value += out;
    b.quoted = true;
  }

  protected readBacktick(b: WordBuilder): void {
    const start = this.pos;
    this.pos++;
    let inner = "";
    for (;;) {
      if (this.eof()) throw this.error("unterminated backquote");
      const c = this.ch();
      if (c === "`") {
        this.pos++;
        break;
      }
      const n = this.ch(1);
      if (c === "\\" && (n === "`" || n === "$" || n === "\\")) {
        inner += n;
        this.pos += 2;
      } else {
        inner += c;
        this.pos++;
      }
    }
    b.subs.push(this.child(inner, this.level + 1).parseAll());
    b.dynamic = true;
    b.value += this.src.slice(start, this.pos);
  }

  protected readArrayLiteral(b: WordBuilder): void {
    const start = this.pos;
    this.pos++;
    for (;;) {
      this.skipNewlines();
      if (this.eof()) throw this.error("unterminated array assignment");
      if (this.ch() === ")") {
        this.pos++;
        break;
      }
      b.absorb(this.readWord());
    }
    b.value += this.src.slice(start, this.pos);
  }
}
