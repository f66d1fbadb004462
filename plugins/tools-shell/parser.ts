import type {
  AndOrList,
  Command,
  CompoundCommand,
  CompoundKind,
  ListItem,
  Pipeline,
  Redirect,
  RedirectOp,
  Script,
  Word,
} from "./ast.js";
import { CASE_END, literalWord, REDIRECT_OPS, Scanner, type Stop } from "./scanner.js";

export { ShellSyntaxError } from "./scanner.js";

/**
 * A recursive-descent parser for the bash command language (lists, pipelines, compound commands, functions,
 * quoting, expansions, substitutions, here-documents). It never executes or expands anything: it exists so the
 * safety checks can see every command that would run, including those hidden in `$( )`, backticks and `<( )`.
 */

const RESERVED_ONLY_AFTER = new Set(["then", "elif", "else", "fi", "do", "done", "esac", "}", "]]", "in"]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/** Parses a whole command line. Throws `ShellSyntaxError` when bash would not accept it (or it is too exotic). */
export function parseShell(src: string): Script {
  return new Parser(src, 0).parseAll();
}

class Parser extends Scanner {
  parseAll(): Script {
    const script = this.parseScript({});
    this.skipNewlines();
    if (!this.eof()) throw this.error(`unexpected ${this.describeNext()}`);
    for (const h of this.pending) h.redirect.heredoc = literalWord("");
    this.pending = [];
    return script;
  }

  protected child(src: string, depth: number): Parser {
    return new Parser(src, depth);
  }

  /* ---------- lists and pipelines ---------- */

  protected parseScript(stop: Stop): Script {
    const items: ListItem[] = [];
    for (;;) {
      this.skipNewlines();
      if (this.eof() || this.atStop(stop)) break;
      const list = this.parseAndOr();
      this.skipBlanks();
      const op = this.peekOp();
      let background = false;
      if (op === "&") {
        this.pos++;
        background = true;
      } else if (op === ";") {
        this.pos++;
      } else if (op !== "\n" && !this.eof() && !this.atStop(stop)) {
        throw this.error(`unexpected ${this.describeNext()}`);
      }
      items.push({ list, background });
    }
    return { items };
  }

  private atStop(stop: Stop): boolean {
    const op = this.peekOp();
    if (op === ")") return !!stop.paren;
    if (op) return CASE_END.has(op) && !!stop.caseArm;
    const word = this.peekBareWord();
    return word !== undefined && !!stop.words?.includes(word);
  }

  private parseAndOr(): AndOrList {
    const pipelines = [this.parsePipeline()];
    const ops: Array<"&&" | "||"> = [];
    for (;;) {
      this.skipBlanks();
      const op = this.peekOp();
      if (op !== "&&" && op !== "||") break;
      this.pos += 2;
      this.skipNewlines();
      ops.push(op);
      pipelines.push(this.parsePipeline());
    }
    return { pipelines, ops };
  }

  private parsePipeline(): Pipeline {
    let negated = false;
    for (;;) {
      this.skipBlanks();
      const word = this.peekBareWord();
      if (word === "!") {
        this.pos++;
        negated = !negated;
      } else if (word === "time") {
        const start = this.pos;
        this.pos += 4;
        this.skipBlanks();
        if (this.peekBareWord() === "-p") this.pos += 2;
        this.skipBlanks();
        const op = this.peekOp();
        // A bare `time` (nothing to time) is an ordinary command word.
        if (this.eof() || (op !== undefined && op !== "(" && op !== "<(" && op !== ">(" && !REDIRECT_OPS.has(op))) {
          this.pos = start;
          break;
        }
      } else break;
    }
    const commands = [this.parseCommand()];
    for (;;) {
      this.skipBlanks();
      const op = this.peekOp();
      if (op !== "|" && op !== "|&") break;
      this.pos += op.length;
      this.skipNewlines();
      commands.push(this.parseCommand());
    }
    return { negated, commands };
  }

  /* ---------- commands ---------- */

  private parseCommand(): Command {
    this.skipBlanks();
    if (this.eof()) throw this.error("expected a command at the end of the input");
    const op = this.peekOp();
    if (op === "(") return this.nested(() => (this.at("((") ? this.parseArithCommand() : this.parseSubshell()));
    if (op !== undefined && op !== "<(" && op !== ">(" && !REDIRECT_OPS.has(op)) {
      throw this.error(`expected a command, found ${this.describeNext()}`);
    }
    const word = this.peekBareWord();
    switch (word) {
      case "{":
        return this.nested(() => this.parseGroup());
      case "if":
        return this.nested(() => this.parseIf());
      case "while":
      case "until":
        return this.nested(() => this.parseLoop(word));
      case "for":
      case "select":
        return this.nested(() => this.parseFor(word));
      case "case":
        return this.nested(() => this.parseCase());
      case "[[":
        return this.nested(() => this.parseTest());
      case "function":
        return this.nested(() => this.parseFunctionKeyword());
      default:
        if (word !== undefined && RESERVED_ONLY_AFTER.has(word) && word !== "in") {
          throw this.error(`unexpected "${word}"`);
        }
        return this.parseSimple();
    }
  }

  private compound(kind: CompoundKind, bodies: Script[], words: Word[]): CompoundCommand {
    return { type: "compound", kind, bodies, words, redirects: this.parseRedirects() };
  }

  private parseSubshell(): CompoundCommand {
    this.pos++;
    const body = this.parseScript({ paren: true });
    this.expectOp(")");
    return this.compound("subshell", [body], []);
  }

  private parseArithCommand(): Command {
    const arith = this.tryArith(2);
    if (!arith) return this.parseSubshell();
    return this.compound("arith", [], [arith]);
  }

  private parseGroup(): CompoundCommand {
    this.pos++;
    const body = this.parseScript({ words: ["}"] });
    this.expectWord("}");
    return this.compound("group", [body], []);
  }

  private parseIf(): CompoundCommand {
    this.pos += 2;
    const bodies: Script[] = [];
    for (;;) {
      bodies.push(this.parseScript({ words: ["then"] }));
      this.expectWord("then");
      bodies.push(this.parseScript({ words: ["elif", "else", "fi"] }));
      const next = this.peekBareWord();
      if (next === "elif") {
        this.pos += 4;
        continue;
      }
      if (next === "else") {
        this.pos += 4;
        bodies.push(this.parseScript({ words: ["fi"] }));
      }
      break;
    }
    this.expectWord("fi");
    return this.compound("if", bodies, []);
  }

  private parseLoop(kind: "while" | "until"): CompoundCommand {
    this.pos += kind.length;
    const condition = this.parseScript({ words: ["do"] });
    this.expectWord("do");
    const body = this.parseScript({ words: ["done"] });
    this.expectWord("done");
    return this.compound(kind, [condition, body], []);
  }

  private parseFor(kind: "for" | "select"): CompoundCommand {
    this.pos += kind.length;
    this.skipBlanks();
    const words: Word[] = [];
    if (kind === "for" && this.at("((")) {
      const arith = this.tryArith(2);
      if (!arith) throw this.error('expected "))" to end the for (( )) header');
      words.push(arith);
    } else {
      words.push(this.readWord());
      this.skipNewlines();
      if (this.peekBareWord() === "in") {
        this.pos += 2;
        for (;;) {
          this.skipBlanks();
          if (this.eof() || this.peekOp() !== undefined) break;
          words.push(this.readWord());
        }
      }
    }
    this.skipBlanks();
    if (this.peekOp() === ";") this.pos++;
    this.skipNewlines();
    let body: Script;
    if (this.peekBareWord() === "{") {
      this.pos++;
      body = this.parseScript({ words: ["}"] });
      this.expectWord("}");
    } else {
      this.expectWord("do");
      body = this.parseScript({ words: ["done"] });
      this.expectWord("done");
    }
    return this.compound(kind, [body], words);
  }

  private parseCase(): CompoundCommand {
    this.pos += 4;
    this.skipBlanks();
    const words = [this.readWord()];
    this.skipNewlines();
    this.expectWord("in");
    const bodies: Script[] = [];
    for (;;) {
      this.skipNewlines();
      if (this.peekBareWord() === "esac") {
        this.pos += 4;
        break;
      }
      if (this.eof()) throw this.error('expected "esac"');
      if (this.ch() === "(") this.pos++;
      for (;;) {
        this.skipBlanks();
        words.push(this.readWord());
        this.skipBlanks();
        if (this.ch() !== "|") break;
        this.pos++;
      }
      this.expectOp(")");
      bodies.push(this.parseScript({ words: ["esac"], caseArm: true }));
      this.skipBlanks();
      const op = this.peekOp();
      if (op && CASE_END.has(op)) this.pos += op.length;
      else if (this.peekBareWord() !== "esac")
        throw this.error(`expected ";;" or "esac", found ${this.describeNext()}`);
    }
    return this.compound("case", bodies, words);
  }

  /** `[[ ... ]]`: operands only; `<`, `>`, `(`, `)`, `&&`, `||` are operators here, not redirections or lists. */
  private parseTest(): CompoundCommand {
    this.pos += 2;
    const words: Word[] = [];
    for (;;) {
      this.skipNewlines();
      if (this.eof()) throw this.error('expected "]]"');
      if (this.peekBareWord() === "]]") {
        this.pos += 2;
        break;
      }
      const op = this.peekOp();
      if (op && op !== "<(" && op !== ">(") this.pos += op.length;
      else words.push(this.readWord());
    }
    return this.compound("test", [], words);
  }

  private parseFunctionKeyword(): Command {
    this.pos += "function".length;
    this.skipBlanks();
    const name = this.readWord().value;
    this.skipBlanks();
    if (this.at("(")) {
      this.pos++;
      this.expectOp(")");
    }
    this.skipNewlines();
    return { type: "function", name, body: this.parseCommand(), redirects: [] };
  }

  private parseSimple(): Command {
    const assigns: Word[] = [];
    const words: Word[] = [];
    const redirects: Redirect[] = [];
    for (;;) {
      this.skipBlanks();
      if (this.eof()) break;
      const redirect = this.tryRedirect();
      if (redirect) {
        redirects.push(redirect);
        continue;
      }
      const op = this.peekOp();
      if (op === "(" && words.length === 1 && !assigns.length && !redirects.length && !words[0].quoted) {
        if (!words[0].dynamic) return this.parseFunctionBody(words[0].value);
      }
      if (op !== undefined && op !== "<(" && op !== ">(") break;
      const word = this.readWord();
      if (!words.length && ASSIGNMENT.test(word.raw)) assigns.push(word);
      else words.push(word);
    }
    if (!words.length && !assigns.length && !redirects.length) {
      throw this.error(`expected a command, found ${this.describeNext()}`);
    }
    return { type: "simple", assigns, words, redirects };
  }

  private parseFunctionBody(name: string): Command {
    this.pos++;
    this.expectOp(")");
    this.skipNewlines();
    return this.nested(() => ({ type: "function", name, body: this.parseCommand(), redirects: [] }));
  }

  /* ---------- redirections and here-documents ---------- */

  private parseRedirects(): Redirect[] {
    const out: Redirect[] = [];
    for (;;) {
      this.skipBlanks();
      const r = this.tryRedirect();
      if (!r) return out;
      out.push(r);
    }
  }

  private tryRedirect(): Redirect | undefined {
    const start = this.pos;
    let fd: number | undefined;
    const digits = /\d+(?=[<>])/y;
    digits.lastIndex = this.pos;
    const m = digits.exec(this.src);
    if (m) {
      fd = Number(m[0]);
      this.pos += m[0].length;
    }
    const op = this.peekOp();
    if (!op || !REDIRECT_OPS.has(op)) {
      this.pos = start;
      return undefined;
    }
    this.pos += op.length;
    this.skipBlanks();
    const next = this.peekOp();
    if (this.eof() || (next !== undefined && next !== "<(" && next !== ">(")) {
      throw this.error(`expected a file name after "${op}", found ${this.describeNext()}`);
    }
    const redirect: Redirect = { fd, op: op as RedirectOp, target: this.readWord() };
    if (op === "<<" || op === "<<-") {
      const { value, quoted } = redirect.target;
      this.pending.push({ redirect, delimiter: value, stripTabs: op === "<<-", literal: quoted });
    }
    return redirect;
  }
}
