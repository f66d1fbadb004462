import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { isInside } from "../../core/index.js";
import { bwrapArgs, type Confinement } from "./bwrap.js";

const PROBE_TIMEOUT_MS = 15_000;

/**
 * The start-up self-check: a confined shell must fail to write into the daemon home (hidden) and into the user's
 * home directory (read-only), and fail to reach a port the daemon opens on loopback (no network). Resolves undefined when
 * confinement holds, else the reason it does not.
 */
export async function probeSandbox(bwrap: string, c: Confinement, home: string): Promise<string | undefined> {
  const tag = randomBytes(6).toString("hex");
  const inHome = path.join(home, `.sandbox-probe-${tag}`);
  // Outside every writable place, and not under /tmp (private inside the sandbox): the user's home directory, else
  // the daemon's directory, else the root.
  const base = [homedir(), process.cwd(), "/"].find((d) => !isInside(tmpdir(), d) && !isInside("/tmp", d)) ?? "/";
  const beside = path.join(base, `.agentd-sandbox-probe-${tag}`);
  const server = createServer((socket) => socket.destroy());
  let reached = false;
  server.on("connection", () => {
    reached = true;
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const port = (server.address() as { port: number }).port;
  const script =
    'touch "$1" 2>/dev/null && echo wrote-home; touch "$2" 2>/dev/null && echo wrote-outside; ' +
    '(exec 3<>"/dev/tcp/127.0.0.1/$3") 2>/dev/null && echo reached-network; echo probe-done';
  const args = bwrapArgs(c, {
    // `--norc`: bash runs ~/.bashrc for `-c` when its stdin is a socket, as if started by sshd, and node's stdin
    // pipe is one. A shell start-up file (pyenv, nvm, conda) took ~0.6 s of CPU beside a fresh daemon's first turns
    // (docs/benchmarks.md, issue 27), and one that exits or prints would decide the check. The agent's commands
    // (stdin /dev/null) do not read it either.
    argv: ["/bin/bash", "--norc", "-c", script, "probe", inHome, beside, String(port)],
    cwd: "/tmp",
    network: false,
    writable: [],
  });
  try {
    const { out, err, error } = await new Promise<{ out: string; err: string; error?: Error }>((resolve) => {
      execFile(
        bwrap,
        args,
        { timeout: PROBE_TIMEOUT_MS, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: homedir() } },
        (e, o, s) => resolve({ out: String(o), err: String(s), error: e ?? undefined }),
      );
    });
    const leaks = ["wrote-home", "wrote-outside", "reached-network"].filter((w) => out.includes(w));
    if (existsSync(inHome) || existsSync(beside)) leaks.push("a probe file appeared outside");
    if (reached) leaks.push("reached the daemon's loopback port");
    if (leaks.length) return `the self-check escaped the sandbox (${leaks.join(", ")})`;
    if (error || !out.includes("probe-done")) {
      const last = err.trim().split("\n").pop() || error?.message || "no output";
      return `bubblewrap could not start a sandbox: ${last.slice(0, 300)}`;
    }
    return undefined;
  } finally {
    server.close();
    rmSync(inHome, { force: true });
    rmSync(beside, { force: true });
  }
}
