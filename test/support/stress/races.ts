import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ToolContext } from "../../../core/index.js";
import { createFsTools } from "../../../plugins/tools-fs/index.js";
import { makeTempHome, startTestDaemon } from "../../../testing/daemon.js";
import { makeToolContext } from "../../../testing/plugin-harness.js";

const SECRET = "OUTSIDE-SECRET";
const OUTSIDE_NAME = "outside-only-name.txt";

/**
 * Another process flips `race.txt` between a regular file and a symbolic link to a file outside the project, and
 * `dir` between a real directory and a link to a directory outside it, as fast as it can.
 */
const SWAPPER = `
const fs = require("node:fs");
process.chdir(process.argv[1]);
const t = (f) => { try { f(); } catch {} };
for (;;) {
  t(() => { fs.symlinkSync("../outside/secret.txt", "race.tmp"); fs.renameSync("race.tmp", "race.txt"); });
  t(() => { fs.writeFileSync("race.tmp2", "inside"); fs.renameSync("race.tmp2", "race.txt"); });
  t(() => { fs.unlinkSync("dir"); fs.renameSync("dir.real", "dir"); });
  t(() => { fs.renameSync("dir", "dir.real"); fs.symlinkSync("../outside/sub", "dir"); });
}
`;

export interface RaceStats {
  /** Attempts per operation. */
  attempts: Record<string, number>;
  /** Attempts that read, listed or changed something outside the project. */
  escapes: Record<string, number>;
  total: number;
  totalEscapes: number;
}

/**
 * Every file route and file tool, run `rounds` times each while the swapper races them. An escape is any answer
 * that carries the outside file's content or the outside directory's names, or any change outside the project.
 */
export async function runRaces(rounds: number): Promise<RaceStats> {
  const base = realpathSync(makeTempHome("agentd-race-"));
  const proj = join(base, "proj");
  const outside = join(base, "outside");
  mkdirSync(join(outside, "sub"), { recursive: true });
  writeFileSync(join(outside, "secret.txt"), SECRET);
  const outsideFiles = ["inner.txt", "victim.txt", OUTSIDE_NAME];
  const resetOutside = () => {
    for (const f of outsideFiles) writeFileSync(join(outside, "sub", f), SECRET);
  };
  resetOutside();
  mkdirSync(join(proj, "dir.real"), { recursive: true });
  writeFileSync(join(proj, "dir.real", "inner.txt"), "inside");
  writeFileSync(join(proj, "race.txt"), "inside");
  symlinkSync("../outside/sub", join(proj, "dir"));

  const stats: RaceStats = { attempts: {}, escapes: {}, total: 0, totalEscapes: 0 };
  const outsideChanged = () =>
    readFileSync(join(outside, "secret.txt"), "utf8") !== SECRET ||
    outsideFiles.some((f) => !existsSync(join(outside, "sub", f))) ||
    readFileSync(join(outside, "sub", "inner.txt"), "utf8") !== SECRET ||
    existsSync(join(outside, "sub", "new.txt")) ||
    existsSync(join(outside, "sub", "deep")) ||
    existsSync(join(outside, "sub", "moved.txt"));
  const record = (op: string, leaked: boolean) => {
    stats.attempts[op] = (stats.attempts[op] ?? 0) + 1;
    stats.total++;
    const changed = outsideChanged();
    if (leaked || changed) {
      stats.escapes[op] = (stats.escapes[op] ?? 0) + 1;
      stats.totalEscapes++;
      if (changed) {
        rmSync(join(outside, "sub", "new.txt"), { force: true });
        rmSync(join(outside, "sub", "deep"), { recursive: true, force: true });
        rmSync(join(outside, "sub", "moved.txt"), { force: true });
        writeFileSync(join(outside, "secret.txt"), SECRET);
        resetOutside();
      }
    }
  };
  const leaks = (text: string) => text.includes(SECRET) || text.includes(OUTSIDE_NAME);

  const d = await startTestDaemon();
  let swapper: ChildProcess | undefined;
  try {
    const id = await d.createSession({ cwd: proj });
    const tools = createFsTools();
    const ctx: ToolContext = makeToolContext({ sessionId: "race", cwd: proj });
    const routes: Array<[string, () => Promise<string>]> = [
      ["GET fs/download race.txt", async () => (await d.get(`/sessions/${id}/fs/download?path=race.txt`)).text],
      [
        "GET fs/download dir/inner.txt",
        async () => (await d.get(`/sessions/${id}/fs/download?path=dir/inner.txt`)).text,
      ],
      ["GET fs (list dir)", async () => (await d.get(`/sessions/${id}/fs?path=dir`)).text],
      ["GET fs/search", async () => (await d.get(`/sessions/${id}/fs/search?q=outside-only`)).text],
      ["DELETE fs dir/victim.txt", async () => (await d.delete(`/sessions/${id}/fs?path=dir/victim.txt`)).text],
      [
        "POST fs/rename dir/inner.txt",
        async () => (await d.post(`/sessions/${id}/fs/rename`, { path: "dir/inner.txt", name: "moved.txt" })).text,
      ],
      ["tool read race.txt", async () => (await tools.read.execute({ path: "race.txt" }, ctx)).content],
      ["tool read dir/inner.txt", async () => (await tools.read.execute({ path: "dir/inner.txt" }, ctx)).content],
      ["tool ls dir", async () => (await tools.ls.execute({ path: "dir" }, ctx)).content],
      ["tool grep", async () => (await tools.grep.execute({ pattern: "OUTSIDE-SEC[R]ET", path: "." }, ctx)).content],
      ["tool glob", async () => (await tools.glob.execute({ pattern: "**/*.txt" }, ctx)).content],
      [
        "tool write dir/new.txt",
        async () => (await tools.write.execute({ path: "dir/new.txt", content: "x" }, ctx)).content,
      ],
      [
        "tool write dir/deep/new.txt (creates dir/deep)",
        async () => (await tools.write.execute({ path: "dir/deep/new.txt", content: "x" }, ctx)).content,
      ],
      [
        "tool edit race.txt",
        async () =>
          (await tools.edit.execute({ path: "race.txt", oldString: "OUTSIDE", newString: "changed" }, ctx)).content,
      ],
    ];
    swapper = spawn(process.execPath, ["-e", SWAPPER, proj], { stdio: "ignore" });
    for (let i = 0; i < rounds; i++) {
      for (const [op, run] of routes) {
        const text = await run().catch((err: unknown) => String(err));
        record(op, leaks(text));
      }
      // The inside files the routes may legitimately move or delete come back for the next round.
      try {
        writeFileSync(join(proj, "dir.real", "victim.txt"), "inside");
        rmSync(join(proj, "dir.real", "deep"), { recursive: true, force: true });
      } catch {
        // dir.real is being swapped right now
      }
    }
  } finally {
    swapper?.kill("SIGKILL");
    await d.cleanup();
    rmSync(base, { recursive: true, force: true });
  }
  return stats;
}
