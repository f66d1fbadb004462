import { randomBytes } from "node:crypto";
import { chmodSync, type Dirent, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { writePrivateFile } from "../core/files.js";

/** The daemon home: `--home`, else $AGENTD_HOME, else ~/.agentd. */
export function resolveHome(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(explicit ?? env.AGENTD_HOME ?? join(homedir(), ".agentd"));
}

/** What `server.json` holds: how local clients find and authenticate to the running daemon. */
export interface ServerInfo {
  pid: number;
  host: string;
  port: number;
  url: string;
  token: string;
  instanceId: string;
  startedAt: string;
  version: string;
  apiVersion: 1;
}

export function serverFile(home: string): string {
  return join(home, "server.json");
}

function tokenFile(home: string): string {
  return join(home, "token");
}

/**
 * Creates the daemon home (0700) and repairs the modes of an existing one, whatever the umask: the home itself 0700
 * (nothing below it can then be reached by other users), its files 0600 and its directories 0700. One level only, so
 * start-up does not grow with the plugins' data. Installed third-party plugins (`plugins/`) and session worktrees
 * (`worktrees/`) keep their own modes.
 */
export function ensureHome(home: string): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  let entries: Dirent[] = [];
  try {
    chmodSync(home, 0o700);
    entries = readdirSync(home, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (e.isDirectory() && KEEP_MODES.has(e.name)) continue;
    if (!e.isDirectory() && !e.isFile()) continue;
    try {
      chmodSync(join(home, e.name), e.isDirectory() ? 0o700 : 0o600);
    } catch {
      // not ours to change (another owner): left as it is
    }
  }
}

const KEEP_MODES = new Set(["plugins", "worktrees"]);

/** The access token: created once, kept across restarts (mode 0600) until rotated. */
export function loadOrCreateToken(home: string): string {
  try {
    const t = readFileSync(tokenFile(home), "utf8").trim();
    if (t.length >= 32) return t;
  } catch {
    // first start
  }
  return rotateToken(home);
}

export function rotateToken(home: string): string {
  const token = randomBytes(32).toString("base64url");
  writePrivateFile(tokenFile(home), `${token}\n`);
  return token;
}

export function writeServerInfo(home: string, info: ServerInfo): void {
  writePrivateFile(serverFile(home), `${JSON.stringify(info, null, 2)}\n`);
}

export function readServerInfo(home: string): ServerInfo | undefined {
  try {
    return JSON.parse(readFileSync(serverFile(home), "utf8")) as ServerInfo;
  } catch {
    return undefined;
  }
}

/** Removes server.json only if it still describes this instance (a newer daemon may own it). */
export function removeServerInfo(home: string, instanceId: string): void {
  const cur = readServerInfo(home);
  if (cur && cur.instanceId !== instanceId) return;
  rmSync(serverFile(home), { force: true });
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
