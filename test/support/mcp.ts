import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import {
  type AnyRoute,
  type Disposable,
  FileDocuments,
  type McpServerStatus,
  type PluginContext,
  ProjectTrustToken,
  pluginDocuments,
  Registry,
  type ServiceToken,
  SettingsToken,
  silentLogger,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
  toDisposable,
} from "../../core/index.js";
import mcpPlugin, { McpManager, type McpManagerDeps } from "../../plugins/mcp/index.js";
import { makeToolContext } from "../../testing/plugin-harness.js";
import { SANDBOX_OFF } from "./unconfined-shell.js";

export const FIXTURE = fileURLToPath(new URL("../fixtures/mcp-server.js", import.meta.url));

export function stdio(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [FIXTURE], ...extra };
}

export function toolCtx(signal: AbortSignal = new AbortController().signal): ToolContext {
  return makeToolContext({ sessionId: "s1", cwd: process.cwd(), signal });
}

export interface Harness {
  manager: McpManager;
  tools: Registry<ToolDefinition>;
  call(name: string, args?: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult>;
  server(name: string, project?: string): McpServerStatus | undefined;
  /** Resolves when `pred` holds, re-checked on every status change (the guard only turns a hang into a message). */
  until(what: string, pred: (list: McpServerStatus[]) => boolean): Promise<void>;
}

export function harness(deps: Partial<McpManagerDeps> = {}): Harness {
  const tools = new Registry<ToolDefinition>("tool", (t) => t.name);
  const manager = new McpManager({
    tools: { add: (t) => tools.add("mcp", t) },
    home: tmpdir(),
    options: { connectTimeoutMs: 10_000, reconnect: { attempts: 3, baseDelayMs: 20, maxDelayMs: 100 } },
    // The manager's own behaviour; project servers in the real sandbox are tested in test/project-mcp.test.ts.
    sandbox: () => SANDBOX_OFF,
    ...deps,
  });
  return {
    manager,
    tools,
    async call(name, args = {}, signal) {
      const tool = tools.get(name);
      if (!tool)
        throw new Error(
          `no tool ${name}; have ${tools
            .list()
            .map((t) => t.name)
            .join(", ")}`,
        );
      return tool.execute(args, toolCtx(signal));
    },
    server: (name, project) => manager.list().find((s) => s.name === name && s.project === project),
    until(what, pred) {
      if (pred(manager.list())) return Promise.resolve();
      return new Promise((resolve, reject) => {
        let sub: Disposable | undefined;
        const guard = setTimeout(() => {
          sub?.dispose();
          reject(new Error(`timed out waiting for ${what}; status: ${JSON.stringify(manager.list())}`));
        }, 15_000);
        sub = manager.onChange(() => {
          if (!pred(manager.list())) return;
          clearTimeout(guard);
          sub?.dispose();
          resolve();
        });
      });
    },
  };
}

export const stateOf = (h: Harness, name: string, state: McpServerStatus["state"], project?: string) =>
  h.until(`${name} ${state}`, () => h.server(name, project)?.state === state);

/** The slice of a plugin context the mcp plugin uses, backed by real registries. */
export function fakeContext(raw: Record<string, unknown>) {
  const tools = new Registry<ToolDefinition>("tool", (t) => t.name);
  const routes = new Registry<AnyRoute>("route", (r) => `${r.method} ${r.path}`);
  const services = new Map<string, unknown>([[SettingsToken.id, { version: "test", raw }]]);
  const get = <T>(token: ServiceToken<T>) => services.get(token.id) as T | undefined;
  const disposables: Disposable[] = [];
  const point = <T>(reg: Registry<T>) => ({ add: (item: T) => reg.add("mcp", item) });
  const ctx = {
    id: "mcp",
    manifest: mcpPlugin.manifest,
    log: silentLogger,
    options: {},
    home: tmpdir(),
    dataDir: () => tmpdir(),
    documents: () => pluginDocuments(() => new FileDocuments(tmpdir()), "mcp"),
    routes: point(routes),
    tools: point(tools),
    personas: { add: () => toDisposable(() => {}) },
    themes: { add: () => toDisposable(() => {}) },
    commands: { add: () => toDisposable(() => {}) },
    providers: { add: () => toDisposable(() => {}) },
    services: {
      provide<T>(token: ServiceToken<T>, value: T) {
        services.set(token.id, value);
        return toDisposable(() => services.delete(token.id));
      },
      provideClass() {
        throw new Error("not used");
      },
      get<T>(token: ServiceToken<T>): T {
        const v = get(token);
        if (v === undefined) throw new Error(`no service ${token.id}`);
        return v;
      },
      tryGet: get,
    },
    deps: { settings: services.get(SettingsToken.id) },
    events: { on: () => toDisposable(() => {}) },
    onDispose: (d: Disposable | (() => void)) => disposables.push(typeof d === "function" ? toDisposable(d) : d),
  } satisfies PluginContext;
  expect(get(ProjectTrustToken)).to.equal(undefined);
  return { ctx, tools, routes, services };
}
