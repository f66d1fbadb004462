/**
 * How a Node client (terminal, ACP) finds the daemon of a home: `server.json` names its URL and token; when no
 * daemon answers, one is started in the background (detached, logging to `<home>/daemon.log`), under a lock file so
 * two clients starting at once never start two daemons. Nothing here imports the daemon's code.
 */
import { spawn } from "node:child_process";
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Api, createApi } from "./client.js";

export interface DaemonConnection {
  url: string;
  token: string;
  home: string;
  /** Always talks to the current daemon: after `refresh` it follows a restarted daemon to its new address. */
  api: Api;
  /** True when this call started the daemon. */
  started: boolean;
  /**
   * Re-reads `server.json`: when a (restarted) daemon answers there under another address or token, the
   * connection follows it. True when the daemon of the home answers.
   */
  refresh(): Promise<boolean>;
}

interface ServerJson {
  url: string;
  token: string;
  pid: number;
  instanceId: string;
}

/** The `agentd` command (package.json "bin"): it starts the daemon from its launcher (scripts/bundle-launcher.ts). */
const AGENTD = fileURLToPath(new URL("../../host/agentd.cjs", import.meta.url));

export function resolveClientHome(home?: string): string {
  return resolve(home ?? process.env.AGENTD_HOME ?? join(homedir(), ".agentd"));
}

function readServer(home: string): ServerJson | undefined {
  try {
    return JSON.parse(readFileSync(join(home, "server.json"), "utf8")) as ServerJson;
  } catch {
    return undefined;
  }
}

/** A daemon answers at the recorded address but refuses the recorded token: starting another would only collide. */
export class TokenRejectedError extends Error {
  constructor(url: string, home: string) {
    super(
      `the daemon at ${url} rejected the access token in ${join(home, "server.json")}: it is another daemon's ` +
        "address, or its token changed since. `agentd --home <its home> token` prints the token of a daemon; " +
        `to use ${home}, stop the daemon on that port or restart this home's daemon (\`agentd stop\`, then \`agentd serve\`).`,
    );
  }
}

/** The daemon described by server.json, if it answers as that instance. */
async function reachable(home: string): Promise<ServerJson | undefined> {
  const info = readServer(home);
  if (!info) return undefined;
  try {
    const res = await fetch(`${info.url}/api/v1/server/identity`, {
      headers: { authorization: `Bearer ${info.token}` },
      signal: AbortSignal.timeout(2000),
    });
    if (res.status === 401 || res.status === 403) throw new TokenRejectedError(info.url, home);
    if (!res.ok) return undefined;
    const body = (await res.json()) as { instanceId?: string };
    return body.instanceId === info.instanceId ? info : undefined;
  } catch (err) {
    if (err instanceof TokenRejectedError) throw err;
    return undefined;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Takes `<home>/start.lock` (holding our pid); a lock whose holder died is taken over. */
function tryLock(file: string): boolean {
  // The pid is written to a private file first and linked into place, so nobody ever reads an empty lock.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, String(process.pid), { mode: 0o600 });
  try {
    linkSync(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    const holder = Number(readFileSync(file, "utf8").trim());
    if (Number.isInteger(holder) && holder > 0 && pidAlive(holder)) return false;
    rmSync(file, { force: true });
    return tryLock(file);
  } finally {
    rmSync(tmp, { force: true });
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface AttachOptions {
  home?: string;
  /** Start a daemon when none answers (default true). */
  start?: boolean;
  /** How long to wait for a started daemon (default 20 s). */
  timeoutMs?: number;
}

/** Attaches to the home's daemon, starting it in the background when none runs. */
export async function attachDaemon(opts: AttachOptions = {}): Promise<DaemonConnection> {
  const home = resolveClientHome(opts.home);
  const connect = (info: ServerJson, started: boolean): DaemonConnection => {
    let client = createApi({ baseUrl: info.url, token: info.token });
    const conn: DaemonConnection = {
      url: info.url,
      token: info.token,
      home,
      started,
      api: new Proxy({} as Api, { get: (_target, key) => Reflect.get(client, key) }),
      async refresh() {
        const now = await reachable(home);
        if (!now) return false;
        if (now.url !== conn.url || now.token !== conn.token) {
          conn.url = now.url;
          conn.token = now.token;
          client = createApi({ baseUrl: now.url, token: now.token });
        }
        return true;
      },
    };
    return conn;
  };
  const running = await reachable(home);
  if (running) return connect(running, false);
  if (opts.start === false)
    throw new Error(`no agentd daemon is running for ${home} (start one with \`agentd serve\`)`);

  mkdirSync(home, { recursive: true, mode: 0o700 });
  const lock = join(home, "start.lock");
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  let started = false;
  try {
    // Wait for the lock: another client may be starting the daemon right now, then we simply attach to it.
    while (!tryLock(lock)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for another client to start the daemon (${lock})`);
      await pause(50);
      const info = await reachable(home);
      if (info) return connect(info, false);
    }
    started = true;
    const again = await reachable(home);
    if (again) return connect(again, false);
    const log = openSync(join(home, "daemon.log"), "a", 0o600);
    const child = spawn(process.execPath, [AGENTD, "serve", "--home", home], {
      detached: true,
      stdio: ["ignore", log, log],
      env: process.env,
    });
    closeSync(log);
    let exited: number | null = null;
    child.on("exit", (code) => {
      exited = code ?? 1;
    });
    child.unref();
    // The daemon writes server.json once it listens; poll for it (the daemon is another process, nothing to await).
    for (;;) {
      const info = await reachable(home);
      if (info) return connect(info, true);
      if (exited !== null) throw new Error(`the daemon exited with code ${exited}; see ${join(home, "daemon.log")}`);
      if (Date.now() > deadline) throw new Error(`the daemon did not start in time; see ${join(home, "daemon.log")}`);
      await pause(50);
    }
  } finally {
    if (started) rmSync(lock, { force: true });
  }
}
