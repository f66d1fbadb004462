import { existsSync, mkdtempSync, readFileSync, realpathSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { ConfirmationRequest, ToolContext, ToolDefinition, ToolResult } from "../../core/index.js";
import {
  BackgroundTasks,
  createBashKillTool,
  createBashOutputTool,
  createBashTool,
  DEFAULT_SHELL_LIMITS,
  type ShellLimits,
} from "../../plugins/tools-shell/index.js";
import { readProcStat } from "../../plugins/tools-shell/process.js";
import { makeToolContext } from "../../testing/plugin-harness.js";
import { UNCONFINED_SHELL } from "./unconfined-shell.js";

/** True while the process exists and is not a zombie waiting to be reaped. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = readProcStat(pid);
  return stat !== undefined && stat.state !== "Z" && stat.state !== "X";
}

/** Resolves once `file` exists and is non-empty (watching the directory, no sleeping). */
export function waitForFile(file: string): Promise<string> {
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

export function toolCtx(dir: string, over: Partial<ToolContext> = {}): ToolContext {
  return makeToolContext({
    sessionId: "s-shell",
    cwd: dir,
    confirm: async () => expect.fail("unexpected confirmation"),
    ...over,
  });
}

export interface Harness {
  dir: string;
  tasks: BackgroundTasks;
  bash: ToolDefinition;
  output: ToolDefinition;
  kill: ToolDefinition;
  confirmations: ConfirmationRequest[];
  ctx(over?: Partial<ToolContext>): ToolContext;
}

export function harness(limits: Partial<ShellLimits> = {}, maxPerSession = 4): Harness {
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

export function errorOf(result: ToolResult) {
  expect(result.isError, result.content).to.equal(true);
  return result.error ?? expect.fail("error details missing");
}
