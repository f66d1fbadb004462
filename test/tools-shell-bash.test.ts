import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { alive, errorOf, type Harness, harness, waitForFile } from "./support/tools-shell.js";

describe("tools-shell: bash", () => {
  let h: Harness;
  beforeEach(() => {
    h = harness();
  });
  afterEach(async () => {
    await h.tasks.killAll();
    rmSync(h.dir, { recursive: true, force: true });
  });

  it("returns combined output and the exit code; a non-zero exit is a readable result", async () => {
    const result = await h.bash.execute({ command: "echo out; echo err >&2; exit 3" }, h.ctx());
    expect(result.isError).to.equal(undefined);
    expect(result.content).to.equal("out\nerr\n\nExit code: 3");
    expect(result.meta).to.include({ exitCode: 3, signal: null, omittedChars: 0 });
  });

  it("runs in the session's working directory with an empty stdin", async () => {
    const result = await h.bash.execute({ command: "pwd; cat; echo end" }, h.ctx());
    expect(result.content).to.equal(`${h.dir}\nend\n\nExit code: 0`);
  });

  it("says so when the command prints nothing", async () => {
    const result = await h.bash.execute({ command: "true" }, h.ctx());
    expect(result.content).to.equal("(no output)\n\nExit code: 0");
  });

  it("caps long output, keeping the start and the end, with a note saying how much was left out", async () => {
    const result = await h.bash.execute({ command: "seq 1 20000" }, h.ctx());
    const total = Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join("").length;
    expect(result.content.startsWith("1\n2\n3\n")).to.equal(true);
    expect(result.content.endsWith("19999\n20000\n\nExit code: 0")).to.equal(true);
    expect(result.content).to.match(new RegExp(`\\[\\.\\.\\. (\\d+) characters omitted \\(${total} in total\\)`));
    expect(result.meta?.omittedChars).to.equal(total - 2_000);
    expect(result.content.length).to.be.lessThan(2_300);
  });

  it("kills the whole process tree on timeout, grandchildren included", async () => {
    const pidFile = join(h.dir, "grandchild.pid");
    const command = `(sleep 30 & echo $! > ${pidFile}; wait); echo never`;
    const result = await h.bash.execute({ command, timeout: 1.5 }, h.ctx());
    const error = errorOf(result);
    expect(error.code).to.equal("timeout");
    expect(error.retryable).to.equal(true);
    expect(result.content).to.not.include("never");
    const grandchild = Number(readFileSync(pidFile, "utf8"));
    expect(grandchild).to.be.greaterThan(0);
    expect(alive(grandchild), "grandchild still running").to.equal(false);
  });

  it("kills the whole tree when the turn is aborted, with SIGKILL for what ignores SIGTERM", async () => {
    const ac = new AbortController();
    const pidFile = join(h.dir, "stubborn.pid");
    const command = `echo started; (trap '' TERM; sleep 30 & echo $! > ${pidFile}; wait)`;
    const running = h.bash.execute({ command }, h.ctx({ signal: ac.signal }));
    const grandchild = Number(await waitForFile(pidFile));
    expect(alive(grandchild)).to.equal(true);
    ac.abort();
    const result = await running;
    expect(errorOf(result).code).to.equal("aborted");
    expect(result.content).to.include("started");
    expect(alive(grandchild), "grandchild survived the abort").to.equal(false);
  });

  it("does not start anything when the turn is already aborted", async () => {
    const ac = new AbortController();
    ac.abort();
    const result = await h.bash.execute({ command: "touch marker" }, h.ctx({ signal: ac.signal }));
    expect(errorOf(result).code).to.equal("aborted");
    expect(existsSync(join(h.dir, "marker"))).to.equal(false);
  });

  it("rejects bad arguments as invalid_arguments", async () => {
    for (const args of [
      {},
      { command: "" },
      { command: 42 },
      { command: "ls", timeout: 0 },
      { command: "ls", timeout: 601 },
    ]) {
      expect(errorOf(await h.bash.execute(args, h.ctx())).code, JSON.stringify(args)).to.equal("invalid_arguments");
    }
  });

  it("reports a working directory that vanished as execution_failed", async () => {
    const result = await h.bash.execute({ command: "ls" }, h.ctx({ cwd: join(h.dir, "gone") }));
    expect(errorOf(result).code).to.equal("execution_failed");
  });

  it("mentions output it could not capture from processes left running in the background", async () => {
    const result = await h.bash.execute({ command: "sleep 1 & echo started" }, h.ctx());
    expect(result.content).to.match(/^started\n\n\[Note: processes the command started in the background/);
    expect(result.meta?.exitCode).to.equal(0);
  });
});
