import { expect } from "chai";
import fc from "fast-check";
import { checkPlanModeCommand, classifyCommand } from "../plugins/tools-shell/index.js";
import { DANGEROUS, dq, HARMLESS, sq } from "./support/shell-classifier.js";

describe("tools-shell: dangerous-command classifier", () => {
  for (const cmd of DANGEROUS) {
    it(`flags ${JSON.stringify(cmd)}`, () => {
      const verdict = classifyCommand(cmd);
      expect(verdict.dangerous, JSON.stringify(verdict)).to.equal(true);
      expect(verdict.reasons).to.not.be.empty;
    });
  }

  for (const cmd of HARMLESS) {
    it(`does not flag ${JSON.stringify(cmd)}`, () => {
      expect(classifyCommand(cmd)).to.deep.equal({ dangerous: false, reasons: [] });
    });
  }

  it("says what is dangerous in the reason", () => {
    expect(classifyCommand("ls && rm -rf build").reasons).to.deep.equal(["recursive, forced delete: rm -rf build"]);
    expect(classifyCommand("curl -s https://x | sh").reasons[0]).to.match(/downloaded by curl/);
    expect(classifyCommand("sudo rm -rf /").reasons).to.have.length(2);
  });

  it("treats a command it cannot parse as needing confirmation", () => {
    const verdict = classifyCommand("rm -rf build 'unterminated");
    expect(verdict.dangerous).to.equal(true);
    expect(verdict.reasons[0]).to.match(/could not be parsed/);
  });

  const dangerousArb = fc.constantFrom(...DANGEROUS);
  const harmlessArb = fc.constantFrom(...HARMLESS.filter((c) => !c.includes("\n")));
  /** Ways to embed a command line so that it still runs. */
  const wrappers: Array<(inner: string, other: string) => string> = [
    (d, h) => `${h} && ${d}`,
    (d, h) => `${d} && ${h}`,
    (d, h) => `${h} || ${d}`,
    (d, h) => `${h}; ${d}`,
    (d, h) => `${d}; ${h}`,
    (d, h) => `${h}\n${d}`,
    (d, h) => `${h} | ${d}`,
    (d, h) => `${d} | ${h}`,
    (d) => `( ${d} )`,
    (d) => `{ ${d}; }`,
    (d) => `echo $( ${d} )`,
    (d) => `x="$( ${d} )"`,
    (d) => `cat <( ${d} )`,
    (d) => `bash -c ${sq(d)}`,
    (d) => `sh -c ${sq(d)}`,
    (d) => `bash -lc ${dq(d)}`,
    (d) => `eval ${sq(d)}`,
    (d) => `if true; then ${d}; fi`,
    (d) => `for i in 1 2; do ${d}; done`,
    (d) => `while false; do ${d}; done`,
    (d) => `case x in x) ${d};; esac`,
    (d, h) => `${h} & ${d}`,
  ];
  const wrapperArb = fc.constantFrom(...wrappers);

  it("property: a dangerous command stays dangerous wherever it is embedded", () => {
    fc.assert(
      fc.property(
        dangerousArb,
        fc.array(fc.tuple(wrapperArb, harmlessArb), { minLength: 1, maxLength: 3 }),
        (cmd, layers) => {
          const line = layers.reduce((inner, [wrap, other]) => wrap(inner, other), cmd);
          expect(classifyCommand(line).dangerous, line).to.equal(true);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("property: prefixes such as sudo, env, nohup, time, command, xargs keep a simple command dangerous", () => {
    const simple = DANGEROUS.filter((c) => /^[\w/.-]+ [^|&;<>(){}`$]*$/.test(c) && !c.startsWith("su "));
    const prefixes = [
      "sudo",
      "sudo -u root",
      "env",
      "env FOO=1",
      "nohup",
      "time",
      "command",
      "nice -n 5",
      "timeout 10",
      "exec",
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...simple),
        fc.array(fc.constantFrom(...prefixes), { minLength: 1, maxLength: 3 }),
        (cmd, pre) => {
          const line = `${pre.join(" ")} ${cmd}`;
          expect(classifyCommand(line).dangerous, line).to.equal(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("property: any text quoted as an argument of echo or printf is never flagged", () => {
    const text = fc.oneof(dangerousArb, harmlessArb, fc.string(), fc.string({ unit: "binary", maxLength: 40 }));
    const quote = fc.constantFrom(sq, dq);
    const printer = fc.constantFrom("echo", "echo -n", "printf '%s\\n'", "printf");
    fc.assert(
      fc.property(printer, quote, text, (p, q, t) => {
        const line = `${p} ${q(t.replace(/\0/g, ""))}`;
        expect(classifyCommand(line), line).to.deep.equal({ dangerous: false, reasons: [] });
      }),
      { numRuns: 400 },
    );
  });

  it("property: harmless commands joined by any operators stay harmless", () => {
    const op = fc.constantFrom(" && ", " || ", "; ", " | ", "\n");
    fc.assert(
      fc.property(fc.array(fc.tuple(harmlessArb, op), { minLength: 1, maxLength: 5 }), (parts) => {
        const line = parts.map(([c, o], i) => (i ? o : "") + c).join("");
        expect(classifyCommand(line).dangerous, line).to.equal(false);
      }),
      { numRuns: 300 },
    );
  });

  const shellSoup = fc.string({
    unit: fc.constantFrom(
      "rm",
      " -rf ",
      "x",
      " ",
      "'",
      '"',
      "\\",
      "$",
      "(",
      ")",
      "{",
      "}",
      "`",
      "|",
      "&",
      ";",
      "<",
      ">",
      "\n",
      "#",
      "*",
      "$(",
      "<<",
      "EOF",
      "if ",
      "then ",
      "fi",
      "case ",
      " in ",
      ";;",
      "esac",
      "[[",
      "]]",
      "=",
      "sudo ",
      "bash -c ",
      "((",
      "))",
      "${",
      "function ",
      "do ",
      "done",
      "for ",
      "while ",
    ),
    maxLength: 30,
  });

  it("property: never throws, whatever the input", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), shellSoup), (s) => {
        const verdict = classifyCommand(s);
        expect(verdict.dangerous).to.equal(verdict.reasons.length > 0);
        expect(checkPlanModeCommand(s)).to.have.property("allowed");
      }),
      { numRuns: 1500 },
    );
  });

  it("property: whatever plan mode allows is never dangerous", () => {
    const pieces = fc.constantFrom(...HARMLESS, ...DANGEROUS);
    fc.assert(
      fc.property(fc.oneof(shellSoup, pieces), (s) => {
        if (checkPlanModeCommand(s).allowed) expect(classifyCommand(s).dangerous, s).to.equal(false);
      }),
      { numRuns: 1500 },
    );
  });

  it("reads $(( )) and (( )) as arithmetic, like bash (nothing runs)", () => {
    expect(classifyCommand("x=$((rm -rf build))").dangerous).to.equal(false);
    expect(classifyCommand("((rm -rf build))").dangerous).to.equal(false);
    expect(classifyCommand("x=$( (rm -rf build) )").dangerous).to.equal(true);
    expect(classifyCommand("echo $(( $(rm -rf build) + 1 ))").dangerous).to.equal(true);
  });

  it("does not blow the stack on deeply nested input", () => {
    expect(classifyCommand(`${"( ".repeat(5000)}ls${" )".repeat(5000)}`).dangerous).to.equal(true);
    expect(classifyCommand("$(".repeat(3000)).dangerous).to.equal(true);
  });
});
