import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import {
  type ConfirmationRequest,
  type PluginContext,
  silentLogger,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from "../core/index.js";
import shellPlugin, {
  BackgroundTasks,
  createBashKillTool,
  createBashOutputTool,
  createBashTool,
  DEFAULT_SHELL_LIMITS,
  type ShellLimits,
} from "../plugins/tools-shell/index.js";
import { readProcStat } from "../plugins/tools-shell/process.js";
import { makeToolContext } from "../testing/plugin-harness.js";
import { SANDBOX_OFF, UNCONFINED_SHELL } from "./support/unconfined-shell.js";

/** True while the process exists and is not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = readProcStat(pid);
  return stat !== undefined && stat.state !== "Z" && stat.state !== "X";
}

/** Resolves once `file` exists and is non-empty (watching the directory, no sleeping). */
function waitForFile(file: string): Promise<string> {
  const dir = join(file, "..");
  return new Promise((resolve) => {
    const check = () => {
      if (!existsSync(file)) return false;
      const text = readFileSync(file, "utf8").trim();
      if (!text) return false;
      watcher.close();
      resolve(text);
      return true;
    };
    const watcher = watch(dir, () => void check());
    check();
  });
}

function toolCtx(dir: string, over: Partial<ToolContext> = {}): ToolContext {
  return makeToolContext({
    sessionId: "s-shell",
    cwd: dir,
    confirm: async () => expect.fail("unexpected confirmation"),
    ...over,
  });
}

interface Harness {
  dir: string;
  tasks: BackgroundTasks;
  bash: ToolDefinition;
  output: ToolDefinition;
  kill: ToolDefinition;
  confirmations: ConfirmationRequest[];
  ctx(over?: Partial<ToolContext>): ToolContext;
}

function harness(limits: Partial<ShellLimits> = {}, maxPerSession = 4): Harness {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "agentd-shell-")));
  const all: ShellLimits = { ...DEFAULT_SHELL_LIMITS, killGraceMs: 300, maxOutputChars: 2_000, ...limits };
  const tasks = new BackgroundTasks({
    maxPerSession,
    bufferChars: 100_000,
    keepFinished: 8,
    killGraceMs: all.killGraceMs,
  });
  const confirmations: ConfirmationRequest[] = [];
  return {
    dir,
    tasks,
    bash: createBashTool(all, tasks, UNCONFINED_SHELL),
    output: createBashOutputTool(all, tasks),
    kill: createBashKillTool(all, tasks),
    confirmations,
    ctx: (over = {}) =>
      toolCtx(dir, {
        confirm: async (req) => {
          confirmations.push(req);
          throw new Error(`unexpected confirmation: ${req.command}`);
        },
        ...over,
      }),
  };
}

function errorOf(result: ToolResult) {
  expect(result.isError, result.content).to.equal(true);
  return result.error ?? expect.fail("error details missing");
}

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

describe("tools-shell: plugin", () => {
  function register(options: Record<string, unknown> = {}) {
    const tools: ToolDefinition[] = [];
    const disposers: Array<() => void> = [];
    const handlers = new Map<string, (payload: never) => void>();
    const noop = { dispose() {} };
    const ctx = {
      id: "tools-shell",
      manifest: shellPlugin.manifest,
      log: silentLogger,
      options,
      home: tmpdir(),
      dataDir: () => tmpdir(),
      routes: { add: () => noop },
      tools: {
        add: (t: ToolDefinition) => {
          tools.push(t);
          return noop;
        },
      },
      personas: { add: () => noop },
      themes: { add: () => noop },
      commands: { add: () => noop },
      providers: { add: () => noop },
      services: {
        provide: () => noop,
        provideClass: () => noop,
        get: () => expect.fail("no services"),
        tryGet: () => expect.fail("the plugin declares its deps"),
      },
      deps: { sandbox: SANDBOX_OFF },
      events: {
        on: (type: string, h: (payload: never) => void) => {
          handlers.set(type, h);
          return noop;
        },
      },
      onDispose: (d: { dispose(): void } | (() => void)) =>
        disposers.push(typeof d === "function" ? d : () => d.dispose()),
    } as unknown as PluginContext;
    shellPlugin.register(ctx);
    return { ctx, tools, handlers };
  }

  it("declares process and contributes bash, bash_output (read-only) and bash_kill", () => {
    const { tools } = register();
    expect(shellPlugin.manifest.id).to.equal("tools-shell");
    expect(shellPlugin.manifest.capabilities).to.deep.equal(["process"]);
    expect(tools.map((t) => [t.name, t.readOnly ?? false])).to.deep.equal([
      ["bash", false],
      ["bash_output", true],
      ["bash_kill", false],
    ]);
  });

  it("kills every background task when the plugin stops, and a session's tasks when it is deleted", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "agentd-shell-plugin-")));
    try {
      const { ctx, tools, handlers } = register({ killGraceMs: 100 });
      const [bash, output] = tools;
      const startIn = async (sessionId: string) => {
        const r = await bash.execute({ command: "sleep 30", run_in_background: true }, toolCtx(dir, { sessionId }));
        return { id: String(r.meta?.taskId), pid: Number(r.meta?.pid) };
      };
      const doomed = await startIn("deleted-session");
      const survivor = await startIn("other-session");
      handlers.get("session.deleted")?.({ sessionId: "deleted-session" } as never);
      const gone = await output.execute({ task_id: doomed.id }, toolCtx(dir, { sessionId: "deleted-session" }));
      expect(errorOf(gone).code).to.equal("not_found");
      expect(alive(survivor.pid)).to.equal(true);
      await shellPlugin.stop?.(ctx);
      expect(alive(doomed.pid)).to.equal(false);
      expect(alive(survivor.pid)).to.equal(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
