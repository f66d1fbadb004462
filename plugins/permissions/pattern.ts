import { ApiError } from "../../core/index.js";

/**
 * A rule's pattern: the words of one simple command, quoted like a shell would (`git push *`, `rm -rf ./build`,
 * `npm run "test:unit" *`). A word may hold `*` (any characters but `/`); a final lone `*` matches any further arguments,
 * none included. The program name comes first and is literal. Operators (`;`, `&&`, `|`, redirections,
 * substitutions) are refused: a rule names one command, and a line is allowed only when each of its commands is.
 */
export interface Pattern {
  words: string[];
  rest: boolean;
}

const OPERATOR = /[;&|<>()`]/;
/** Stands for a quoted or escaped `*` inside a parsed word. */
const LITERAL_STAR = "\u0000";

export function parsePattern(text: string): Pattern {
  const words: string[] = [];
  let cur = "";
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "'" || ch === '"') {
      const end = text.indexOf(ch, i + 1);
      if (end < 0) throw ApiError.badRequest(`pattern: unterminated ${ch === "'" ? "single" : "double"} quote`);
      // A quoted `*` is a literal star, not a wildcard.
      cur += text.slice(i + 1, end).replaceAll("*", LITERAL_STAR);
      inWord = true;
      i = end;
    } else if (ch === "\\" && i + 1 < text.length) {
      const next = text[++i];
      cur += next === "*" ? LITERAL_STAR : next;
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(cur);
      cur = "";
      inWord = false;
    } else {
      if (OPERATOR.test(ch) || (ch === "$" && text[i + 1] === "(")) {
        throw ApiError.badRequest(
          `pattern: "${ch}" is a shell operator; a rule names one command (its program and arguments)`,
        );
      }
      cur += ch;
      inWord = true;
    }
  }
  if (inWord) words.push(cur);
  if (!words.length) throw ApiError.badRequest("pattern is empty");
  if (text.includes("\u0000")) throw ApiError.badRequest("pattern contains a NUL character");
  if (words[0].includes("*")) throw ApiError.badRequest("pattern must start with the program's name, not a wildcard");
  const rest = words.length > 1 && words[words.length - 1] === "*";
  return { words: rest ? words.slice(0, -1) : words, rest };
}

function wordMatches(pattern: string, value: string): boolean {
  const literal = (s: string) => s.replaceAll(LITERAL_STAR, "*");
  if (!pattern.includes("*")) return literal(pattern) === value;
  const re = new RegExp(
    `^${pattern
      .split("*")
      .map((s) => escapeRegExp(literal(s)))
      .join("[^/]*")}$`,
  );
  return re.test(value);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function programName(word: string): string {
  return word.slice(word.lastIndexOf("/") + 1);
}

/** Whether a command's argv (program first) is what the pattern names. */
export function matchesPattern(p: Pattern, argv: readonly string[]): boolean {
  if (!argv.length) return false;
  if (p.rest ? argv.length < p.words.length : argv.length !== p.words.length) return false;
  const name = p.words[0].replaceAll(LITERAL_STAR, "*");
  if ((name.includes("/") ? argv[0] : programName(argv[0])) !== name) return false;
  for (let i = 1; i < p.words.length; i++) if (!wordMatches(p.words[i], argv[i])) return false;
  return true;
}
