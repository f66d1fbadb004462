import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import type { ToolResult } from "../core/index.js";
import { alive, errorOf, type Harness, harness, waitForFile } from "./support/tools-shell.js";

describe("tools-shell: background tasks", () => {
  let h: Harness;
  beforeEach(() => {
    h = harness({}, 2);
  });
  afterEach(async () => {
    await h.tasks.killAll();
    rmSync(h.dir, { recursive: true, force: true });
  });

  async function start(command: string, ctx = h.ctx()): Promise<string> {
    const result = await h.bash.execute({ command, run_in_background: true }, ctx);
    expect(result.isError, result.content).to.equal(undefined);
    const id = result.meta?.taskId;
    expect(id).to.be.a("string");
    expect(result.content).to.include(String(id));
    return String(id);
  }

  it("returns new output incrementally, then the exit code", async () => {
    const go = join(h.dir, "go");
    const id = await start(`echo one; while [ ! -f ${go} ]; do sleep 0.05; done; echo two; exit 7`);

    const first = await h.output.execute({ task_id: id, wait: 10 }, h.ctx());
    expect(first.content).to.equal(`Task ${id}: running\none\n`);
    expect(first.meta).to.include({ status: "running", exitCode: null });

    const none = await h.output.execute({ task_id: id }, h.ctx());
    expect(none.content).to.equal(`Task ${id}: running\n(no new output)`);

    writeFileSync(go, "");
    let rest = "";
    let last: ToolResult = none;
    while (last.meta?.status === "running") {
      last = await h.output.execute({ task_id: id, wait: 10 }, h.ctx());
      rest += last.content.split("\n").slice(1).join("\n");
    }
    expect(rest).to.include("two");
    expect(rest).to.not.include("one");
    expect(last.meta).to.include({ status: "exited", exitCode: 7 });
    expect(last.content.split("\n")[0]).to.equal(`Task ${id}: exited with code 7`);
  });

  it("filters new output by a regular expression", async () => {
    const id = await start("printf 'a1\\nb2\\na3\\n'");
    await h.tasks.get("s-shell", id)?.ended;
    const result = await h.output.execute({ task_id: id, filter: "^a" }, h.ctx());
    expect(result.content).to.equal(`Task ${id}: exited with code 0\na1\na3`);
    for (const filter of ["(", "(a+)+$"]) {
      const bad = await h.output.execute({ task_id: id, filter }, h.ctx());
      expect(errorOf(bad).code, filter).to.equal("invalid_arguments");
    }
  });

  it("kills a running task's whole process tree", async () => {
    const pidFile = join(h.dir, "bg.pid");
    const id = await start(`echo ready; sleep 30 & echo $! > ${pidFile}; wait`);
    const grandchild = Number(await waitForFile(pidFile));
    expect(alive(grandchild)).to.equal(true);

    const killed = await h.kill.execute({ task_id: id }, h.ctx());
    expect(killed.content).to.match(new RegExp(`^Task ${id} was killed`));
    expect(killed.content).to.include("ready");
    expect(killed.meta).to.include({ status: "killed" });
    expect(alive(grandchild)).to.equal(false);

    const after = await h.output.execute({ task_id: id }, h.ctx());
    expect(after.content.split("\n")[0]).to.equal(`Task ${id}: killed`);
    const again = await h.kill.execute({ task_id: id }, h.ctx());
    expect(again.content).to.match(/was already killed; nothing to kill/);
  });

  it("keeps tasks per session and answers not_found for unknown or foreign ids", async () => {
    const id = await start("sleep 30");
    const other = h.ctx({ sessionId: "someone-else" });
    expect(errorOf(await h.output.execute({ task_id: id }, other)).code).to.equal("not_found");
    expect(errorOf(await h.kill.execute({ task_id: id }, other)).code).to.equal("not_found");
    const unknown = await h.output.execute({ task_id: "bg-999" }, h.ctx());
    expect(errorOf(unknown).code).to.equal("not_found");
    expect(unknown.content).to.include(id);
  });

  it("bounds the number of running tasks per session", async () => {
    await start("sleep 30");
    await start("sleep 30");
    const third = await h.bash.execute({ command: "sleep 30", run_in_background: true }, h.ctx());
    expect(errorOf(third).code).to.equal("conflict");
    expect(third.content).to.match(/Too many background tasks/);
    await start("sleep 30", h.ctx({ sessionId: "another-session" }));
  });

  it("ends a background task after its explicit timeout", async () => {
    const result = await h.bash.execute({ command: "sleep 30", run_in_background: true, timeout: 0.2 }, h.ctx());
    const task = h.tasks.get("s-shell", String(result.meta?.taskId)) ?? expect.fail("task missing");
    await task.ended;
    expect(task.status).to.equal("killed");
  });
});
