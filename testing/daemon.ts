import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { importModule } from "../core/import-module.js";
import type { Plugin } from "../core/plugin.js";
import { type Daemon, type DaemonOptions, startDaemon } from "../host/daemon.js";
import { builtinSource, type PluginSource } from "../host/plugin-sources.js";
import type { ServerInfo } from "../host/state.js";
import { builtinPlugins } from "../plugins/index.js";
import { SseClient } from "./sse.js";

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  /** false: no credentials; a string: that bearer token. Default: the daemon's token. */
  auth?: boolean | string;
  headers?: Record<string, string>;
  /** A raw body (sent as is) instead of JSON. */
  raw?: string | Uint8Array;
}

/** Thin HTTP client bound to one daemon, for black-box tests. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    public token: string,
  ) {}

  get api(): string {
    return `${this.baseUrl}/api/v1`;
  }

  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  async request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    opts: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    const auth = opts.auth ?? true;
    if (auth !== false) headers.authorization = `Bearer ${typeof auth === "string" ? auth : this.token}`;
    let payload: string | Uint8Array<ArrayBuffer> | undefined;
    if (opts.raw !== undefined) payload = typeof opts.raw === "string" ? opts.raw : new Uint8Array(opts.raw);
    else if (body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined) headers["content-type"] ??= "application/json";
    const url = path.startsWith("http")
      ? path
      : path.startsWith("/api/") || path.startsWith("/login") || path === "/"
        ? `${this.baseUrl}${path}`
        : `${this.api}${path}`;
    const res = await fetch(url, { method, headers, body: payload, redirect: "manual" });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get("content-type") ?? "").includes("json") && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  get<T = any>(path: string, opts?: RequestOptions) {
    return this.request<T>("GET", path, undefined, opts);
  }
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  post<T = any>(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request<T>("POST", path, body, opts);
  }
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  delete<T = any>(path: string, opts?: RequestOptions) {
    return this.request<T>("DELETE", path, undefined, opts);
  }

  /** Opens an SSE stream (`/sessions/{id}/events` or `/sessions/events`). */
  sse(path: string, opts: { lastEventId?: string | number; paused?: boolean } = {}): Promise<SseClient> {
    return SseClient.open(`${this.api}${path}`, { token: this.token, ...opts });
  }

  /** Creates a session and returns its id. */
  async createSession(body: Record<string, unknown> = {}): Promise<string> {
    const res = await this.post<{ id: string }>("/sessions", body);
    if (res.status !== 201) throw new Error(`create session: ${res.status} ${res.text}`);
    return res.body.id;
  }
}

export interface TestDaemonOptions {
  /** Written as `<home>/config.json`. */
  config?: Record<string, unknown>;
  /** Extra environment (merged over a clean env: no AGENTD_* or OPENAI_* from the outer process). */
  env?: Record<string, string>;
  extraPlugins?: PluginSource[];
  builtins?: PluginSource[];
  /** Reuse a home (restart tests). */
  home?: string;
  /** Listen port (default 0: any free port); a restart test passes the previous one so clients find it again. */
  port?: number;
}

export interface TestDaemon extends ApiClient {
  readonly daemon: Daemon;
  readonly home: string;
  readonly info: ServerInfo;
  /** Stops the daemon; the home is kept for a restart and removed by `cleanup`. */
  stop(): Promise<void>;
  /** Stops (if running) and deletes the home. */
  cleanup(): Promise<void>;
}

export function makeTempHome(prefix = "agentd-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith("AGENTD_") && !k.startsWith("OPENAI_")) env[k] = v;
  }
  return { ...env, ...extra };
}

/**
 * Starts a real daemon in this process on 127.0.0.1 port 0 with a temporary home, responses validated against
 * their schemas. The returned object is also an API client authenticated with the daemon's token.
 */
export async function startTestDaemon(opts: TestDaemonOptions = {}): Promise<TestDaemon> {
  const home = opts.home ?? makeTempHome();
  if (opts.config) writeFileSync(join(home, "config.json"), JSON.stringify(opts.config, null, 2));
  const dopts: DaemonOptions = {
    home,
    host: "127.0.0.1",
    port: opts.port ?? 0,
    env: cleanEnv({ AGENTD_LOG_LEVEL: "warn", ...opts.env }),
    extraPlugins: opts.extraPlugins,
    builtins: opts.builtins,
    validateResponses: true,
  };
  // A test that names its own database (the team server's tests) keeps the store that database selects.
  const ownDatabase = opts.env?.AGENTD_DATABASE_URL !== undefined || opts.config?.database !== undefined;
  if (!ownDatabase) dopts.builtins = await withTestStore(opts.builtins);
  const daemon = await startDaemon(dopts);
  const client = new ApiClient(daemon.url, daemon.info.token);
  let stopped = false;
  return Object.assign(client, {
    daemon,
    home,
    info: daemon.info,
    async stop() {
      if (stopped) return;
      stopped = true;
      await daemon.stop();
    },
    async cleanup() {
      if (!stopped) {
        stopped = true;
        await daemon.stop();
      }
      rmSync(home, { recursive: true, force: true });
    },
  });
}

/**
 * `AGENTD_TEST_STORE=<module>`: every daemon of the run stores its sessions through the plugin that module exports
 * by default (in place of `storage-sqlite`), so a whole black-box suite proves a storage plugin. Daemons started as
 * child processes (`spawnDaemon`), and daemons given a database (`AGENTD_DATABASE_URL`, `database`), keep their own.
 */
async function withTestStore(builtins: PluginSource[] | undefined): Promise<PluginSource[] | undefined> {
  const spec = process.env.AGENTD_TEST_STORE;
  if (!spec) return builtins;
  const mod = await importModule<{ default?: Plugin }>(pathToFileURL(resolve(spec)).href);
  if (!mod.default?.manifest) throw new Error(`AGENTD_TEST_STORE=${spec} does not export a plugin by default`);
  const list = builtins ?? builtinPlugins.map(builtinSource);
  if (!list.some((s) => s.manifest.id === "storage-sqlite")) return list;
  return [...list.filter((s) => s.manifest.id !== "storage-sqlite"), builtinSource(mod.default)];
}

/** The `agentd` command as installed (package.json "bin"): what a user spawns. */
const MAIN = fileURLToPath(new URL("../host/agentd.cjs", import.meta.url));

export interface DaemonProcess {
  child: ChildProcess;
  info: ServerInfo;
  client: ApiClient;
  stderr(): string;
  /** What it printed so far (the listening line, the one-time sign-in link). */
  stdout(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

/**
 * Runs `agentd serve --port 0` as a child process (for signals, SIGKILL recovery and CLI tests). `wrap`: a command
 * the daemon runs under (e.g. `["strace", "-f", ...]`); the child is then that command, the daemon's pid is
 * `info.pid`.
 */
export async function spawnDaemon(
  home: string,
  env: Record<string, string> = {},
  timeoutMs = 15_000,
  wrap: string[] = [],
): Promise<DaemonProcess> {
  const file = join(home, "server.json");
  rmSync(file, { force: true });
  const argv = [...wrap, process.execPath, MAIN, "serve", "--port", "0", "--home", home];
  const child = spawn(argv[0] as string, argv.slice(1), {
    env: cleanEnv({ AGENTD_LOG_LEVEL: "warn", ...env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const deadline = Date.now() + timeoutMs;
  let done = false;
  void exited.then(() => {
    done = true;
  });
  // The daemon writes server.json once it listens: poll the file (the child is another process, no event to await).
  while (!existsSync(file)) {
    if (done) throw new Error(`agentd exited before listening: ${err}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`agentd did not start within ${timeoutMs} ms: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  const info = JSON.parse(readFileSync(file, "utf8")) as ServerInfo;
  return { child, info, client: new ApiClient(info.url, info.token), stderr: () => err, stdout: () => out, exited };
}
