/** Helpers that read a command's argument vector the way the command itself would (option clusters, `--`). */

export function basename(cmd: string): string {
  const i = cmd.lastIndexOf("/");
  return i >= 0 ? cmd.slice(i + 1) : cmd;
}

export interface ParsedOptions {
  /** Single-letter options, clusters split (`-rf` gives r and f). */
  short: Set<string>;
  /** Long options without the dashes; the value after `=` or the next argument when the option takes one. */
  long: Map<string, string | true>;
  /** Everything that is not an option (after `--`, everything). */
  operands: string[];
}

export interface OptionSpec {
  /** Short options that take a value (`-o file`, `-ofile`). */
  shortWithValue?: string;
  /** Long options that take a value as the next argument when it is not attached with `=`. */
  longWithValue?: readonly string[];
  /** Stop option parsing at the first operand (POSIX style: `find`, `xargs`, `sudo`). */
  stopAtOperand?: boolean;
}

/** GNU-style option parsing: clusters, attached values, `--` and (unless told otherwise) options after operands. */
export function parseOptions(args: readonly string[], spec: OptionSpec = {}): ParsedOptions {
  const short = new Set<string>();
  const long = new Map<string, string | true>();
  const operands: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const name = a.slice(2, eq < 0 ? undefined : eq);
      if (eq >= 0) long.set(name, a.slice(eq + 1));
      else if (spec.longWithValue?.includes(name) && i + 1 < args.length) long.set(name, args[++i]);
      else long.set(name, true);
    } else if (a.startsWith("-") && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const letter = a[j];
        short.add(letter);
        if (spec.shortWithValue?.includes(letter)) {
          if (j === a.length - 1) i++;
          break;
        }
      }
    } else {
      operands.push(a);
      if (spec.stopAtOperand) {
        operands.push(...args.slice(i + 1));
        break;
      }
    }
  }
  return { short, long, operands };
}

/** True when a long option was given, allowing GNU's unambiguous abbreviations (`--forc` for `--force`). */
export function hasLong(opts: ParsedOptions, name: string, minLength = 3): boolean {
  for (const given of opts.long.keys()) {
    if (given === name || (given.length >= minLength && name.startsWith(given))) return true;
  }
  return false;
}

/**
 * Skips a wrapper's own options and returns the index of the wrapped command, or -1 when there is none.
 * `withValue` lists options (with their dashes) that consume the next argument.
 */
export function skipWrapperOptions(args: readonly string[], from: number, withValue: readonly string[] = []): number {
  let i = from;
  while (i < args.length) {
    const a = args[i];
    if (a === "--") return i + 1 < args.length ? i + 1 : -1;
    if (!a.startsWith("-") || a === "-") return i;
    i += withValue.includes(a) ? 2 : 1;
  }
  return -1;
}

/** A short, readable rendering of a command for reasons and messages. */
export function display(args: readonly string[], max = 80): string {
  const text = args.map((a) => (a === "" || /[\s'"]/.test(a) ? JSON.stringify(a) : a)).join(" ");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
