import { execFileSync } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { errorOf, type Harness, harness } from "./support/tools-shell.js";

describe("tools-shell: plan mode", () => {
  let h: Harness;
  beforeEach(() => {
    h = harness();
    execFileSync("git", ["init", "-q"], { cwd: h.dir });
    writeFileSync(join(h.dir, "a.txt"), "alpha\nbeta\n");
  });
  afterEach(() => rmSync(h.dir, { recursive: true, force: true }));

  const plan = () => h.ctx({ mode: "plan" });

  it("runs read-only commands and pipes of them", async () => {
    const result = await h.bash.execute({ command: "ls && git status --short | sort; grep -c a a.txt" }, plan());
    expect(result.isError).to.equal(undefined);
    expect(result.content).to.equal("a.txt\n?? a.txt\n2\n\nExit code: 0");
  });

  it("refuses a redirection into a file, naming it, and writes nothing", async () => {
    const result = await h.bash.execute({ command: "cat a.txt > copy.txt" }, plan());
    const error = errorOf(result);
    expect(error.code).to.equal("permission_denied");
    expect(result.content).to.include('">copy.txt"');
    expect(existsSync(join(h.dir, "copy.txt"))).to.equal(false);
  });

  it("refuses commands off the allowlist and substitutions, naming the offending part", async () => {
    const cases: Array<[string, string]> = [
      ["npm install", '"npm"'],
      ["ls && touch x", '"touch"'],
      ["cat $(ls)", "$(ls)"],
      ["git commit -m x", '"git commit"'],
    ];
    for (const [command, part] of cases) {
      const result = await h.bash.execute({ command }, plan());
      expect(errorOf(result).code, command).to.equal("permission_denied");
      expect(result.content, command).to.include(part);
    }
    expect(existsSync(join(h.dir, "x"))).to.equal(false);
  });

  it("refuses background tasks", async () => {
    const result = await h.bash.execute({ command: "ls", run_in_background: true }, plan());
    expect(errorOf(result).code).to.equal("permission_denied");
    expect(result.content).to.match(/run_in_background/);
    expect(h.tasks.list("s-shell")).to.be.empty;
  });
});
