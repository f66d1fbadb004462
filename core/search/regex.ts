/*
 * A ripgrep prefilter for a JavaScript regular expression: a Rust-regex pattern that matches at least every line the
 * JavaScript one matches, so `rg -l` with it never misses a file the tool's own matcher would find (the tool then
 * matches each candidate file with the JavaScript regex, which stays the one definition of a match). Where the
 * languages differ the translation widens: \b and \B become ASCII (as in JavaScript), \W and \D become byte classes,
 * \s gains U+FEFF, look-arounds are dropped, back-references become ".*". Anything else it cannot vouch for gives
 * undefined (no prefilter: every file is matched in JavaScript).
 */

const HEX = /^[0-9a-fA-F]+$/;

function hexEscape(code: number): string {
  return `\\x{${code.toString(16)}}`;
}

/** Skips a group starting at `i` (an opening parenthesis); returns the index after its closing parenthesis. */
function skipGroup(src: string, i: number): number | undefined {
  let depth = 0;
  let inClass = false;
  for (let j = i; j < src.length; j++) {
    const c = src[j];
    if (c === "\\") {
      j++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return j + 1;
  }
  return undefined;
}

/** The escape at src[i] === "\\": its translation and the index after it, or undefined when unsupported. */
function translateEscape(src: string, i: number, inClass: boolean): [string, number] | undefined {
  const c = src[i + 1];
  if (c === undefined) return undefined;
  const next = i + 2;
  switch (c) {
    case "b":
      return inClass ? ["\\x{8}", next] : ["(?-u:\\b)", next];
    case "B":
      return inClass ? undefined : ["(?-u:\\B)", next];
    case "W":
    case "D":
      return inClass ? undefined : [`(?-u:\\${c})`, next];
    case "s":
      return [inClass ? "\\s\\x{feff}" : "[\\s\\x{feff}]", next];
    case "S":
    case "w":
    case "d":
    case "n":
    case "r":
    case "t":
    case "f":
    case "v":
      return [`\\${c}`, next];
    case "0":
      return /[0-9]/.test(src[next] ?? "") ? undefined : ["\\x{0}", next];
    case "c": {
      const letter = src[next];
      if (!letter || !/[A-Za-z]/.test(letter)) return undefined;
      return [hexEscape(letter.charCodeAt(0) % 32), next + 1];
    }
    case "x": {
      const h = src.slice(next, next + 2);
      return h.length === 2 && HEX.test(h) ? [`\\x{${h}}`, next + 2] : undefined;
    }
    case "u": {
      if (src[next] === "{") {
        const end = src.indexOf("}", next);
        const h = end === -1 ? "" : src.slice(next + 1, end);
        return HEX.test(h) ? [`\\x{${h}}`, end + 1] : undefined;
      }
      const h = src.slice(next, next + 4);
      return h.length === 4 && HEX.test(h) ? [`\\x{${h}}`, next + 4] : undefined;
    }
    case "p":
    case "P": {
      const end = src.indexOf("}", next);
      return src[next] === "{" && end !== -1 ? [src.slice(i, end + 1), end + 1] : undefined;
    }
    case "k": {
      const end = src.indexOf(">", next);
      return inClass || src[next] !== "<" || end === -1 ? undefined : [".*", end + 1];
    }
    default:
      if (/[1-9]/.test(c)) {
        if (inClass) return undefined;
        let j = next;
        while (/[0-9]/.test(src[j] ?? "")) j++;
        return [".*", j];
      }
      // Any other escaped punctuation is that character, in both languages.
      return /[A-Za-z0-9]/.test(c) || c.charCodeAt(0) > 0x7e ? undefined : [hexEscape(c.charCodeAt(0)), next];
  }
}

export function ripgrepPrefilter(source: string): string | undefined {
  let out = "";
  let inClass = false;
  let i = 0;
  while (i < source.length) {
    const c = source[i] as string;
    if (c === "\\") {
      const e = translateEscape(source, i, inClass);
      if (!e) return undefined;
      out += e[0];
      i = e[1];
      continue;
    }
    if (inClass) {
      // Rust classes nest ("[") and have set operators ("&&", "--", "~~"); JavaScript's take them literally.
      if (c === "]") inClass = false;
      out += c === "[" || c === "&" || c === "~" ? `\\${c}` : c;
      i++;
      continue;
    }
    if (c === "[") {
      if (source.startsWith("[^]", i)) {
        out += ".";
        i += 3;
        continue;
      }
      if (source.startsWith("[]", i)) return undefined;
      inClass = true;
      out += "[";
      i++;
      if (source[i] === "^") {
        out += "^";
        i++;
      }
      // A leading "]" is a literal in Rust but closes an empty class in JavaScript; handled above.
      continue;
    }
    if (c === "(" && source[i + 1] === "?") {
      const rest = source.slice(i + 2);
      if (rest.startsWith(":")) {
        out += "(?:";
        i += 3;
      } else if (/^(=|!|<=|<!)/.test(rest)) {
        const end = skipGroup(source, i);
        if (end === undefined) return undefined;
        i = end;
      } else if (rest.startsWith("<")) {
        out += "(?P<";
        i += 3;
      } else {
        return undefined;
      }
      continue;
    }
    out += c;
    i++;
  }
  return inClass ? undefined : out;
}
