import {
  type Disposable,
  type Logger,
  type McpManagerService,
  type McpScope,
  type McpServerStatus,
  type ProjectTrust,
  type Sandbox,
  silentLogger,
  toDisposable,
} from "../../core/index.js";
import { loadProjectServers, type ParsedServers, parseServers, type ServerEntry } from "./config.js";
import { type ConnectionOptions, McpConnection, ownerOf, type ToolSink } from "./connection.js";
import { ToolNames } from "./tool-names.js";

export const DEFAULT_CONNECTION_OPTIONS: ConnectionOptions = {
  connectTimeoutMs: 30_000,
  callTimeoutMs: 120_000,
  reconnect: { attempts: 5, baseDelayMs: 1_000, maxDelayMs: 30_000 },
  stableMs: 60_000,
  clientVersion: "1.0.0",
};

export interface McpManagerDeps {
  tools: ToolSink;
  /** Relative `cwd` of global stdio servers resolves against this (the daemon home). */
  home: string;
  log?: Logger;
  /** Looked up lazily: the trust service may be provided by a plugin that starts later. */
  trust?: () => ProjectTrust | undefined;
  options?: Partial<Omit<ConnectionOptions, "reconnect">> & { reconnect?: Partial<ConnectionOptions["reconnect"]> };
  /** Confines project stdio servers (looked up lazily); without one they do not start. */
  sandbox?: () => Sandbox | undefined;
}

/** A configured server that will not run: an invalid entry, reported in the status list. */
class InvalidServer {
  constructor(
    private readonly entry: Extract<ServerEntry, { invalid: string }>,
    private readonly scope: McpScope,
    private readonly project: string | undefined,
  ) {}
  start(): void {}
  reconnect(): void {}
  async close(): Promise<void> {}
  status(): McpServerStatus {
    return {
      name: this.entry.name,
      scope: this.scope,
      ...ownerOf(this.scope, this.project),
      transport: this.entry.transport,
      state: "failed",
      error: `invalid configuration: ${this.entry.invalid}`,
      tools: [],
    };
  }
}

type Server = McpConnection | InvalidServer;

interface Slot {
  server: Server;
  /** The entry as configured; a change restarts the server on reload. */
  signature: string;
}

const GLOBAL = "global";

/**
 * Every MCP server of the daemon: the global ones (config key `mcpServers`) and, per trusted project, the ones in
 * `<project>/.agentd/mcp.json`. Connections run in the background; nothing here waits for a server.
 */
export class McpManager implements McpManagerService {
  private readonly slots = new Map<string, Slot>();
  private readonly listeners = new Set<() => void>();
  private readonly projects = new Set<string>();
  /** File- or key-level config problems by scope ("global" or a project root). */
  private readonly problemsByScope = new Map<string, string>();
  private readonly names = new ToolNames();
  private readonly options: ConnectionOptions;
  private readonly log: Logger;
  private globalRaw: unknown;
  private stopped = false;

  constructor(private readonly deps: McpManagerDeps) {
    const o = deps.options ?? {};
    this.options = {
      ...DEFAULT_CONNECTION_OPTIONS,
      ...o,
      reconnect: { ...DEFAULT_CONNECTION_OPTIONS.reconnect, ...o.reconnect },
    };
    this.log = deps.log ?? silentLogger;
  }

  /**
   * Applies the global `mcpServers` value: new servers start connecting, removed ones close, changed ones restart.
   * Resolves when removed servers are closed; never waits for a connection.
   */
  setGlobalServers(raw: unknown): Promise<void> {
    this.globalRaw = raw;
    return this.apply(GLOBAL, undefined, parseServers(raw, this.deps.home));
  }

  /**
   * Connects the servers of the project containing `cwd` if it is trusted (idempotent; `reload` re-reads its
   * `mcp.json`). Returns that project's server statuses at once, usually still connecting; [] when untrusted.
   */
  ensureProject(cwd: string, opts: { reload?: boolean } = {}): McpServerStatus[] {
    const trust = this.deps.trust?.();
    if (this.stopped || !trust?.isTrusted(cwd)) return [];
    const root = trust.projectRoot(cwd);
    if (!this.projects.has(root) || opts.reload) {
      this.projects.add(root);
      this.apply(root, root, loadProjectServers(root));
    }
    return this.list().filter((s) => s.project === root);
  }

  /** Closes a project's servers (e.g. when its trust is revoked). */
  async forgetProject(root: string): Promise<void> {
    this.projects.delete(root);
    this.problemsByScope.delete(root);
    await this.apply(root, root, { servers: [] });
  }

  /** Re-reads every source: the global value (the given one, else the last) and each known project's file. */
  async reload(globalRaw: unknown = this.globalRaw): Promise<void> {
    const done = [this.setGlobalServers(globalRaw)];
    const trust = this.deps.trust?.();
    for (const root of [...this.projects]) {
      if (trust?.isTrusted(root)) done.push(this.apply(root, root, loadProjectServers(root)));
      else done.push(this.forgetProject(root));
    }
    await Promise.all(done);
  }

  /**
   * The servers an editor gave one session (PUT /sessions/{id}/mcp-servers): connected in the background, their
   * tools offered to that session only. `{}` (or undefined) closes them. Returns the session's server statuses.
   */
  setSessionServers(sessionId: string, raw: unknown, baseDir: string): { statuses: McpServerStatus[]; error?: string } {
    const parsed = parseServers(raw ?? {}, baseDir);
    if (parsed.error) return { statuses: this.sessionServers(sessionId), error: parsed.error };
    void this.apply(sessionScope(sessionId), sessionId, parsed);
    return { statuses: this.sessionServers(sessionId) };
  }

  sessionServers(sessionId: string): McpServerStatus[] {
    return this.list().filter((s) => s.scope === "session" && s.sessionId === sessionId);
  }

  /** Closes a session's servers (the session was deleted). */
  async forgetSession(sessionId: string): Promise<void> {
    this.problemsByScope.delete(sessionScope(sessionId));
    await this.apply(sessionScope(sessionId), sessionId, { servers: [] });
  }

  /** Reconnects a server by name (a project server needs its project root). False when there is no such server. */
  reconnect(name: string, project?: string): boolean {
    const slot = this.slots.get(slotKey(project ?? GLOBAL, name));
    if (!slot || this.stopped) return false;
    slot.server.reconnect();
    return true;
  }

  list(): McpServerStatus[] {
    return [...this.slots.values()].map((s) => s.server.status());
  }

  /** Config problems that are not about one server (an unreadable or malformed file). */
  problems(): string[] {
    return [...this.problemsByScope.values()];
  }

  /** Called after any server's state, error or tool list changes, and when servers are added or removed. */
  onChange(fn: () => void): Disposable {
    this.listeners.add(fn);
    return toDisposable(() => this.listeners.delete(fn));
  }

  /** Resolves once no server is connecting (connected, failed or disabled; a reconnect wait counts as settled). */
  whenSettled(): Promise<void> {
    const settled = () => this.list().every((s) => s.state !== "connecting");
    if (settled()) return Promise.resolve();
    return new Promise((resolve) => {
      const sub = this.onChange(() => {
        if (!settled()) return;
        sub.dispose();
        resolve();
      });
    });
  }

  /** Closes every client (ending stdio servers' processes) and unregisters every tool. */
  async stop(): Promise<void> {
    this.stopped = true;
    const servers = [...this.slots.values()].map((s) => s.server);
    this.slots.clear();
    await Promise.all(servers.map((s) => s.close()));
    this.emit();
  }

  /** Makes the servers of one scope match `parsed`; resolves when removed servers are closed (new ones never awaited). */
  private apply(scope: string, project: string | undefined, parsed: ParsedServers): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (parsed.error) {
      this.problemsByScope.set(scope, parsed.error);
      this.log.warn({ scope }, parsed.error);
    } else this.problemsByScope.delete(scope);

    const wanted = new Map(parsed.servers.map((e) => [slotKey(scope, e.name), e]));
    const closing: Promise<void>[] = [];
    for (const [key, slot] of this.slots) {
      if (!key.startsWith(`${scope}\0`)) continue;
      const entry = wanted.get(key);
      if (entry && signature(entry) === slot.signature) {
        wanted.delete(key);
        continue;
      }
      this.slots.delete(key);
      closing.push(slot.server.close());
    }
    const kind: McpScope = scope.startsWith(SESSION_PREFIX) ? "session" : project ? "project" : "global";
    // A session's tools carry its id, so the agent loop offers them to that session only.
    const sink: ToolSink =
      kind === "session" ? { add: (tool) => this.deps.tools.add({ ...tool, sessionId: project }) } : this.deps.tools;
    for (const [key, entry] of wanted) {
      const server: Server = entry.config
        ? new McpConnection(entry.name, entry.config, kind, project, {
            sink,
            names: this.names,
            log: this.log.child({ mcpServer: entry.name }),
            options: this.options,
            changed: () => this.emit(),
            ...(kind === "project" ? { confine: (argv, cwd, env) => this.confine(argv, cwd, env) } : {}),
          })
        : new InvalidServer(entry, kind, project);
      if (entry.invalid) this.log.warn({ server: entry.name, scope }, `mcp server skipped: ${entry.invalid}`);
      this.slots.set(key, { server, signature: signature(entry) });
    }
    // Started only after every slot exists, so change listeners always see the complete list.
    for (const key of wanted.keys()) this.slots.get(key)?.server.start();
    this.emit();
    return Promise.all(closing).then(() => this.emit());
  }

  /** A project stdio server runs in the sandbox (writable: its directory; network only where the policy allows). */
  private async confine(
    argv: string[],
    cwd: string,
    env: Record<string, string>,
  ): Promise<{ command: string; args: string[] } | string> {
    const sandbox = this.deps.sandbox?.();
    const status = await sandbox?.ready();
    if (!sandbox || !status || (!status.enabled && status.kind !== "off")) {
      return `project MCP servers run only in the sandbox, which is not available (${status?.reason ?? "no sandbox plugin"})`;
    }
    const w = sandbox.wrap({ argv, cwd, env, network: sandbox.networkPolicy(cwd) === "allow", writable: [cwd] });
    return { command: w.file, args: w.args };
  }

  private emit(): void {
    for (const fn of [...this.listeners]) {
      try {
        fn();
      } catch (err) {
        this.log.warn({ err: String(err) }, "mcp change listener failed");
      }
    }
  }
}

const SESSION_PREFIX = "session\0";

function sessionScope(sessionId: string): string {
  return `${SESSION_PREFIX}${sessionId}`;
}

function slotKey(scope: string, name: string): string {
  return `${scope}\0${name}`;
}

function signature(entry: ServerEntry): string {
  return JSON.stringify(entry.config ?? { invalid: entry.invalid });
}
