import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import type { ConfirmationRequest } from "../core/index.js";
import { errorOf, type Harness, harness } from "./support/tools-shell.js";

describe("tools-shell: dangerous-command gate", () => {
  let h: Harness;
  beforeEach(() => {
    h = harness();
  });
  afterEach(() => rmSync(h.dir, { recursive: true, force: true }));

  const command = "touch marker && rm -rf scratch";

  it("asks before a dangerous command and never runs it when the user declines", async () => {
    const asked: ConfirmationRequest[] = [];
    const ctx = h.ctx({
      confirm: async (req) => {
        asked.push(req);
        return false;
      },
    });
    const result = await h.bash.execute({ command }, ctx);
    const error = errorOf(result);
    expect(error.code).to.equal("permission_denied");
    expect(error.suggestedFix).to.match(/declined/);
    expect(error.suggestedFix).to.match(/ask the user|another approach/i);
    expect(asked).to.deep.equal([
      {
        tool: "bash",
        command,
        reason: "recursive, forced delete: rm -rf scratch",
        reasons: ["dangerous"],
        suggestedRule: "rm -rf scratch",
      },
    ]);
    expect(existsSync(join(h.dir, "marker"))).to.equal(false);
  });

  it("runs it once the user allows it", async () => {
    const result = await h.bash.execute({ command }, h.ctx({ confirm: async () => true }));
    expect(result.content).to.equal("(no output)\n\nExit code: 0");
    expect(existsSync(join(h.dir, "marker"))).to.equal(true);
  });

  it("runs it without asking in bypass mode", async () => {
    let asked = 0;
    const ctx = h.ctx({
      permissionMode: "bypass",
      confirm: async () => {
        asked++;
        return true;
      },
    });
    await h.bash.execute({ command }, ctx);
    expect(asked).to.equal(0);
    expect(existsSync(join(h.dir, "marker"))).to.equal(true);
  });

  it("does not ask for harmless commands", async () => {
    const harmless = await h.bash.execute({ command: "echo 'rm -rf /' | grep -c rm" }, h.ctx());
    expect(harmless.content).to.equal("1\n\nExit code: 0");
    expect(h.confirmations).to.be.empty;
  });

  it("reports the turn as aborted when the abort comes while waiting for the answer", async () => {
    const ac = new AbortController();
    const ctx = h.ctx({
      signal: ac.signal,
      confirm: async () => {
        ac.abort();
        return false;
      },
    });
    const result = await h.bash.execute({ command }, ctx);
    expect(errorOf(result).code).to.equal("aborted");
    expect(existsSync(join(h.dir, "marker"))).to.equal(false);
  });
});
