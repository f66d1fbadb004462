import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type AnyRoute,
  type Disposable,
  FileDocuments,
  type Logger,
  type Persona,
  type Plugin,
  type PluginContext,
  type PluginDefinition,
  type PluginManifest,
  type Provider,
  pluginDocuments,
  type SlashCommand,
  silentLogger,
  type Theme,
  type ToolContext,
  type ToolDefinition,
} from "../core/index.js";

/**
 * A `ToolContext` for calling a tool's `execute` directly: build mode, default permissions, confirmations allowed,
 * no questions. Override what the test is about (`cwd`, `signal`, `confirm`, `mode`...).
 */
export function makeToolContext(over: Partial<ToolContext> = {}): ToolContext {
  const cwd = over.cwd ?? tmpdir();
  const sessionId = over.sessionId ?? "s-test";
  return {
    sessionId,
    cwd,
    toolCallId: "call-1",
    mode: "build",
    plansDir: join(cwd, ".agentd", "plans", sessionId),
    permissionMode: "default",
    signal: new AbortController().signal,
    emit: () => {},
    confirm: async () => true,
    ask: async () => [],
    ...over,
  };
}

export interface RegisteredPlugin {
  ctx: PluginContext;
  tools: ToolDefinition[];
  routes: AnyRoute[];
  personas: Persona[];
  themes: Theme[];
  commands: SlashCommand[];
  providers: Provider[];
  /** Services by token id: the ones given in the options plus the ones the plugin provided. */
  services: Map<string, unknown>;
  /** Runs the plugin's `onDispose` cleanups, last first. */
  dispose(): void;
}

export interface RegisterOptions {
  /** The manifest, for a plugin that states none in its code (a third-party one: its package.json holds it). */
  manifest?: PluginManifest;
  home?: string;
  /** The plugin's validated options (`pluginOptions.<id>`). */
  options?: Record<string, unknown>;
  /** Services the plugin may `get`, by token id. */
  services?: Record<string, unknown>;
  log?: Logger;
}

/**
 * Calls a plugin's `register` with a recording context, without a daemon: for unit tests of what a plugin
 * contributes. (For black-box tests, run it in `startTestDaemon({ extraPlugins })`.)
 */
export function registerPlugin(plugin: Plugin | PluginDefinition, opts: RegisterOptions = {}): RegisteredPlugin {
  const manifest = opts.manifest ?? plugin.manifest;
  if (!manifest) throw new Error("registerPlugin: the plugin states no manifest in its code; pass { manifest }");
  const id = manifest.id;
  const home = opts.home ?? tmpdir();
  const services = new Map<string, unknown>(Object.entries(opts.services ?? {}));
  const disposers: Array<() => void> = [];
  const noop: Disposable = { dispose() {} };
  const point = <T>(list: T[]) => ({
    add: (item: T) => {
      list.push(item);
      return noop;
    },
  });
  const out = { tools: [], routes: [], personas: [], themes: [], commands: [], providers: [] } as Omit<
    RegisteredPlugin,
    "ctx" | "services" | "dispose"
  >;
  const ctx: PluginContext = {
    id,
    manifest,
    log: opts.log ?? silentLogger,
    options: opts.options ?? {},
    home,
    documents: () => pluginDocuments(() => new FileDocuments(home), id),
    dataDir: () => {
      const dir = join(home, "plugins-data", id);
      mkdirSync(dir, { recursive: true });
      return dir;
    },
    routes: point(out.routes),
    tools: point(out.tools),
    personas: point(out.personas),
    themes: point(out.themes),
    commands: point(out.commands),
    providers: point(out.providers),
    services: {
      provide: (token, value) => {
        services.set(token.id, value);
        return noop;
      },
      provideClass: () => noop,
      get: (token) => {
        if (!services.has(token.id)) throw new Error(`service ${token.id} is not available in this test`);
        return services.get(token.id) as never;
      },
      tryGet: (token) => services.get(token.id) as never,
    },
    deps: Object.fromEntries(
      Object.entries(plugin.deps ?? {}).map(([key, d]) => [key, services.get("optional" in d ? d.optional.id : d.id)]),
    ),
    events: { on: () => noop },
    onDispose: (d) => void disposers.push(typeof d === "function" ? d : () => d.dispose()),
  };
  plugin.register(ctx);
  return {
    ctx,
    ...out,
    services,
    dispose: () => {
      for (const d of disposers.splice(0).reverse()) d();
    },
  };
}
