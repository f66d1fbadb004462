import { execFileSync } from "node:child_process";
import { expect } from "chai";
import fc from "fast-check";
import type { SimpleCommand } from "../plugins/tools-shell/ast.js";
import { parseShell, ShellSyntaxError } from "../plugins/tools-shell/index.js";
import { firstSimple } from "./support/shell-classifier.js";

describe("tools-shell: parser", () => {
  it("removes quotes and escapes the way bash does", () => {
    const c = firstSimple(`echo 'a b' "c \\"d\\" $HOME" e\\ f $'g\\th' "" x''y`);
    expect(c.words.map((w) => w.value)).to.deep.equal(["echo", "a b", 'c "d" $HOME', "e f", "g\th", "", "xy"]);
    expect(c.words[2].dynamic).to.equal(true);
    expect(c.words[1].dynamic).to.equal(false);
  });

  it("parses lists, pipelines, redirections and assignments", () => {
    const script = parseShell("A=1 B=2 make 2>&1 | tee log && echo ok || echo no; sleep 1 &");
    expect(script.items).to.have.length(2);
    expect(script.items[1].background).to.equal(true);
    const list = script.items[0].list;
    expect(list.ops).to.deep.equal(["&&", "||"]);
    const make = list.pipelines[0].commands[0] as SimpleCommand;
    expect(make.assigns.map((w) => w.raw)).to.deep.equal(["A=1", "B=2"]);
    expect(make.redirects).to.deep.include({ fd: 2, op: ">&", target: make.redirects[0].target });
    expect(make.redirects[0].target.value).to.equal("1");
    expect(list.pipelines[0].commands).to.have.length(2);
  });

  it("parses substitutions, compound commands and here-documents into the tree", () => {
    const script = parseShell(
      "if [[ -n $(git status --porcelain) ]]; then\n  for f in `ls`; do cat <<EOF\n$(id)\nEOF\n  done\nfi",
    );
    const ifCmd = script.items[0].list.pipelines[0].commands[0];
    expect(ifCmd.type).to.equal("compound");
    if (ifCmd.type !== "compound") return;
    expect(ifCmd.kind).to.equal("if");
    const test = ifCmd.bodies[0].items[0].list.pipelines[0].commands[0];
    expect(test.type === "compound" && test.kind).to.equal("test");
    const loop = ifCmd.bodies[1].items[0].list.pipelines[0].commands[0];
    expect(loop.type === "compound" && loop.kind).to.equal("for");
  });

  it("reports syntax errors with a position", () => {
    for (const bad of [
      "echo 'open",
      'echo "open',
      "echo $(ls",
      "(ls",
      "ls )",
      "if true; then ls",
      "| ls",
      "ls &&",
      "ls >",
    ]) {
      expect(() => parseShell(bad), bad).to.throw(ShellSyntaxError);
    }
  });

  it("splits words exactly like bash for quote-heavy input", function () {
    this.timeout(60_000);
    const alphabet = fc.constantFrom("a", "b", " ", "'", '"', "\\", "-", "#", "=", "x y", "é");
    fc.assert(
      fc.property(fc.string({ unit: alphabet, maxLength: 14 }), (s) => {
        const line = `printf '%s\\0' _ ${s}`;
        let bash: string[] | undefined;
        try {
          bash = execFileSync("/bin/bash", ["-c", line], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
            .split("\0")
            .slice(1, -1);
        } catch {
          bash = undefined;
        }
        let ours: string[] | undefined;
        try {
          ours = firstSimple(line)
            .words.slice(3)
            .map((w) => w.value);
        } catch {
          ours = undefined;
        }
        expect(ours, JSON.stringify(s)).to.deep.equal(bash);
      }),
      { numRuns: 60 },
    );
  });
});
