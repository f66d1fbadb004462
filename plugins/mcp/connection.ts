import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import {
  type Disposable,
  errorMessage,
  type Logger,
  type McpScope,
  type McpServerStatus,
  type McpState,
  T,
  type ToolDefinition,
  type ToolResult,
} from "../../core/index.js";
import type { McpServerConfig } from "./config.js";
import { classifyCallError, mapCallResult, normaliseInputSchema, unavailable } from "./results.js";
import { loadMcpSdk, type McpSdk } from "./sdk.js";
import type { NamedRegistration, ToolNames } from "./tool-names.js";

/** The status fields naming a server's owner: its project root or its session. */
export function ownerOf(scope: McpScope, owner: string | undefined): { project?: string; sessionId?: string } {
  if (!owner) return {};
  return scope === "session" ? { sessionId: owner } : { project: owner };
}

/** Where tools go: the plugin's `ctx.tools`, or anything with the same `add`. */
export interface ToolSink {
  add(tool: ToolDefinition): Disposable;
}

export interface ConnectionOptions {
  connectTimeoutMs: number;
  callTimeoutMs: number;
  /** Bounded reconnection after a connected server went away. Initial connect failures are not retried. */
  reconnect: { attempts: number; baseDelayMs: number; maxDelayMs: number };
  /** A connection that stayed up this long gets a fresh reconnection budget when it drops. */
  stableMs: number;
  clientVersion: string;
}

export interface ConnectionDeps {
  sink: ToolSink;
  names: ToolNames;
  log: Logger;
  options: ConnectionOptions;
  /** Called after every change of state, error or tools. */
  changed(): void;
  /**
   * Confines a stdio server (project servers: they come from the repository): the program to spawn instead, or a
   * string saying why it may not run. Absent: the server runs as configured.
   */
  confine?(
    argv: string[],
    cwd: string,
    env: Record<string, string>,
  ): Promise<{ command: string; args: string[] } | string>;
}

const MAX_TOOL_PAGES = 50;
const STDERR_TAIL = 4096;

/** One configured MCP server: its client, its registered tools and its reconnection policy. */
export class McpConnection {
  private state: McpState = "connecting";
  private error: string | undefined;
  private client: Client | undefined;
  /** The client of an in-flight connect, so close() can stop it. */
  private pending: Client | undefined;
  private connectAbort: AbortController | undefined;
  /** Bumped on every (re)connect and on close; stale async work compares and drops its result. */
  private generation = 0;
  private registered = new Map<string, NamedRegistration>();
  private everConnected = false;
  private connectedAt = 0;
  private retries = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private refreshing: Promise<void> = Promise.resolve();
  private stderrTail = "";
  private readonly secrets: string[];

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    readonly scope: McpScope,
    /** The project root (project scope) or the session id (session scope). */
    readonly project: string | undefined,
    private readonly deps: ConnectionDeps,
  ) {
    this.secrets = collectSecrets(config);
  }

  /** Kicks off the connection and returns at once: nothing waits for MCP servers. */
  start(): void {
    if (this.config.disabled) {
      this.setState("disabled", undefined);
      return;
    }
    void this.connect();
  }

  /** Drops the current connection (if any) and connects again with a fresh reconnection budget. */
  reconnect(): void {
    if (this.closed || this.config.disabled) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.retries = 0;
    const old = this.client;
    this.client = undefined;
    void old?.close().catch(() => {});
    void this.connect();
  }

  status(): McpServerStatus {
    return {
      name: this.name,
      scope: this.scope,
      ...ownerOf(this.scope, this.project),
      transport: this.config.transport,
      state: this.state,
      ...(this.error ? { error: this.error } : {}),
      tools: [...this.registered.values()].map((r) => r.name).sort(),
    };
  }

  /** Unregisters the tools and closes the client (which ends a stdio server's process). */
  async close(): Promise<void> {
    this.closed = true;
    this.generation++;
    clearTimeout(this.retryTimer);
    this.connectAbort?.abort(new Error("the MCP server is being closed"));
    this.removeTools();
    const clients = [this.client, this.pending].filter((c): c is Client => c !== undefined);
    this.client = undefined;
    this.pending = undefined;
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
  }

  private current(gen: number): boolean {
    return !this.closed && gen === this.generation;
  }

  private async connect(): Promise<void> {
    const gen = ++this.generation;
    this.connectAbort?.abort(new Error("superseded by a new connection attempt"));
    this.setState("connecting", undefined);
    let sdk: McpSdk;
    try {
      sdk = await loadMcpSdk();
    } catch (err) {
      if (this.current(gen)) this.failed(`could not load the MCP SDK: ${errorMessage(err)}`);
      return;
    }
    if (!this.current(gen)) return;
    const client = new sdk.Client({ name: "agentd", version: this.deps.options.clientVersion }, { capabilities: {} });
    const abort = new AbortController();
    this.pending = client;
    this.connectAbort = abort;
    const timeout = this.config.connectTimeoutMs ?? this.deps.options.connectTimeoutMs;
    client.onclose = () => this.lost(client, "the connection closed");
    client.onerror = (err) =>
      this.deps.log.debug({ server: this.name, err: this.redact(errorMessage(err)) }, "mcp transport error");
    try {
      await client.connect(await this.createTransport(sdk), { timeout, signal: abort.signal });
      if (!this.current(gen)) return;
      client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => this.refresh(gen));
      const tools = await listAllTools(client, timeout, abort.signal);
      if (!this.current(gen)) return;
      this.client = client;
      this.sync(tools);
      this.everConnected = true;
      this.connectedAt = Date.now();
      this.setState("connected", undefined);
      this.deps.log.info({ server: this.name, tools: this.registered.size }, "mcp server connected");
    } catch (err) {
      if (!this.current(gen)) return;
      this.failed(`could not connect: ${this.describe(err)}`);
    } finally {
      if (this.pending === client) this.pending = undefined;
      if (this.connectAbort === abort) this.connectAbort = undefined;
      // Any client that did not become the current one is closed here (kills its process, if any).
      if (this.client !== client) void client.close().catch(() => {});
    }
  }

  /** The connection behind `client` broke (closed, or a call hit a transport error). */
  private lost(client: Client, reason: string): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    this.generation++;
    void client.close().catch(() => {});
    if (Date.now() - this.connectedAt >= this.deps.options.stableMs) this.retries = 0;
    this.deps.log.warn({ server: this.name, reason }, "mcp server disconnected");
    this.failed(`disconnected: ${reason}`);
  }

  /** Marks the server failed; retries with backoff if it had been connected, else unregisters its tools for good. */
  private failed(error: string): void {
    const { attempts, baseDelayMs, maxDelayMs } = this.deps.options.reconnect;
    if (this.everConnected && this.retries < attempts) {
      const delay = Math.min(baseDelayMs * 2 ** this.retries, maxDelayMs);
      this.retries++;
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        if (!this.closed) void this.connect();
      }, delay);
      this.retryTimer.unref();
      this.setState("failed", `${error}; reconnecting in ${delay} ms (attempt ${this.retries} of ${attempts})`);
      return;
    }
    this.removeTools();
    this.setState("failed", error);
    this.deps.log.warn({ server: this.name, error }, "mcp server failed");
  }

  private async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    const client = this.client;
    if (!client || this.state !== "connected") {
      return unavailable(
        this.name,
        this.state === "connecting" ? "it is still connecting" : (this.error ?? "not connected"),
      );
    }
    const timeoutMs = this.config.timeoutMs ?? this.deps.options.callTimeoutMs;
    try {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: timeoutMs });
      return mapCallResult(result, { server: this.name, tool });
    } catch (err) {
      const failure = classifyCallError(err, {
        server: this.name,
        tool,
        aborted: signal.aborted,
        timeoutMs,
        redact: (s) => this.redact(s),
      });
      if (failure.kind === "disconnected") this.lost(client, this.redact(errorMessage(err)));
      return failure.result;
    }
  }

  /** Re-lists tools after a `tools/list_changed` notification; serialised so refreshes apply in order. */
  private refresh(gen: number): void {
    this.refreshing = this.refreshing.then(async () => {
      const client = this.client;
      if (!client || !this.current(gen)) return;
      try {
        const tools = await listAllTools(client, this.config.connectTimeoutMs ?? this.deps.options.connectTimeoutMs);
        if (!this.current(gen)) return;
        this.sync(tools);
        this.deps.changed();
      } catch (err) {
        this.deps.log.warn({ server: this.name, err: this.describe(err) }, "mcp tool list refresh failed");
      }
    });
  }

  /** Registers `tools`, keeping the agentd name of every tool that was already there; drops the ones gone. */
  private sync(tools: Tool[]): void {
    const next = new Map<string, NamedRegistration>();
    for (const tool of tools) {
      if (next.has(tool.name)) continue;
      const prev = this.registered.get(tool.name);
      prev?.dispose();
      try {
        const reg = this.deps.names.register(
          this.name,
          tool.name,
          (n) => this.deps.sink.add(this.definition(n, tool)),
          prev?.name,
        );
        next.set(tool.name, reg);
      } catch (err) {
        this.deps.log.warn({ server: this.name, tool: tool.name, err: errorMessage(err) }, "mcp tool not registered");
      }
    }
    for (const [key, reg] of this.registered) if (!next.has(key)) reg.dispose();
    this.registered = next;
  }

  private definition(name: string, tool: Tool): ToolDefinition {
    const about = tool.description?.trim() || tool.title || tool.annotations?.title || `MCP tool ${tool.name}`;
    return {
      name,
      description: `[${this.name}] ${about}`,
      // Any JSON Schema object is accepted at runtime; Unsafe types it without claiming a TypeBox structure.
      parameters: T.Unsafe<Record<string, unknown>>(normaliseInputSchema(tool.inputSchema)),
      readOnly: false,
      execute: (args, ctx) => this.call(tool.name, args, ctx.signal),
    };
  }

  private removeTools(): void {
    for (const reg of this.registered.values()) reg.dispose();
    this.registered.clear();
  }

  private async createTransport(sdk: McpSdk): Promise<Transport> {
    const c = this.config;
    if (c.transport === "http") {
      return new sdk.StreamableHTTPClientTransport(new URL(c.url), { requestInit: { headers: c.headers } });
    }
    // Only the SDK's safe defaults (PATH, HOME, ...) plus the entry's env: the daemon's own secrets stay behind.
    const env = { ...sdk.getDefaultEnvironment(), ...c.env };
    const dir = c.cwd ?? this.project ?? process.cwd();
    const confined = await this.deps.confine?.([c.command, ...(c.args ?? [])], dir, env);
    if (typeof confined === "string") throw new Error(confined);
    const transport = new sdk.StdioClientTransport({
      command: confined?.command ?? c.command,
      args: confined?.args ?? c.args,
      env,
      cwd: c.cwd,
      stderr: "pipe",
    });
    this.stderrTail = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL);
    });
    return transport;
  }

  /** A readable, redacted reason; for a stdio server the last line it wrote to stderr often says what went wrong. */
  private describe(err: unknown): string {
    let msg = errorMessage(err);
    const last = this.stderrTail.trim().split("\n").pop()?.trim();
    if (this.config.transport === "stdio" && last) msg += ` (stderr: ${last.slice(0, 300)})`;
    return this.redact(msg);
  }

  private redact(text: string): string {
    let out = text;
    for (const s of this.secrets) out = out.split(s).join("***");
    return out;
  }

  private setState(state: McpState, error: string | undefined): void {
    this.state = state;
    this.error = error;
    this.deps.changed();
  }
}

async function listAllTools(client: Client, timeout: number, signal?: AbortSignal): Promise<Tool[]> {
  if (!client.getServerCapabilities()?.tools) return [];
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const res = await client.listTools(cursor ? { cursor } : undefined, { timeout, signal });
    tools.push(...res.tools);
    cursor = res.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

/** Values that must never show up in a status or log: configured env and header values, URL credentials. */
function collectSecrets(config: McpServerConfig): string[] {
  const values: string[] = [];
  if (config.transport === "stdio") values.push(...Object.values(config.env));
  else {
    values.push(...Object.values(config.headers));
    const url = new URL(config.url);
    values.push(url.password, ...url.searchParams.values());
    // "Bearer abc": the token alone may also be echoed.
    for (const v of Object.values(config.headers)) values.push(...v.split(/\s+/));
  }
  // Very short values would redact ordinary words.
  return [...new Set(values)].filter((v) => v.length >= 6).sort((a, b) => b.length - a.length);
}
