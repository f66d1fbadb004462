import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { inject as lightInject } from "light-my-request";
import type {
  AnyRoute,
  Capability,
  Persona,
  Plugin,
  PluginDefinition,
  PluginManifest,
  Provider,
  ServiceToken,
  SlashCommand,
  Theme,
  ToolContext,
  ToolDefinition,
  ToolResult,
} from "../core/index.js";
import {
  DocumentStoreToken,
  type EventBus,
  FileDocuments,
  type Logger,
  type Registry,
  SyncEventBus,
  silentLogger,
} from "../core/index.js";
import { ServiceContainer } from "../host/container.js";
import { createRegistries, provideHostServices } from "../host/host-services.js";
import { Authenticator } from "../host/http/auth.js";
import { createApp } from "../host/http/server.js";
import { SseHub } from "../host/http/sse.js";
import { PluginHost, type PluginStatus } from "../host/loader.js";
import { readPluginPackage } from "../host/plugin-cli/manifest.js";
import { builtinSource, type PluginSource } from "../host/plugin-sources.js";
import { LayeredSettings } from "../host/settings-store.js";
import { makeToolContext } from "./plugin-harness.js";

export interface PluginHarnessOptions {
  /**
   * The plugin's package.json (or its folder; relative to the working directory): its `agentd` key is the manifest,
   * as the daemon reads it, and a manifest the code still states must match it. Default: the code's manifest, else
   * `./package.json` (where `npm test` runs).
   */
  packageJson?: string | URL;
  /** The manifest, given by the test instead of a package.json. */
  manifest?: PluginManifest;
  /** The plugin's options (`pluginOptions.<id>`), validated against its `configSchema` like the daemon does. */
  options?: Record<string, unknown>;
  /**
   * `third-party` (default) holds what its manifest declares and `grant` allows; `builtin` what it declares.
   */
  origin?: "third-party" | "builtin";
  /** What the config allows a third-party plugin (`pluginCapabilities.<id>`); default: all it declares. */
  grant?: Capability[];
  /** Plugins loaded before it (built-in origin), e.g. one that provides a service it requires. */
  plugins?: Plugin[];
  /** Extra host services, e.g. a fake of a service the plugin requires: `fakeService(Token, {...})`. */
  services?: ServiceFake[];
  /** The daemon home (default: a temporary directory, removed by `stop`). */
  home?: string;
  log?: Logger;
  /** Resolve even when the plugin fails to load (then inspect `status`); default: reject with its error. */
  allowFailure?: boolean;
}

export interface InjectOptions {
  /** false: no credentials. Default: the harness's bearer token. */
  auth?: boolean;
  headers?: Record<string, string>;
  /** Take `path` as is (a page outside /api/v1) instead of under `/api/v1`. */
  page?: boolean;
}

/** A route's answer; `body` is the parsed JSON (typed as the test says: `inject<Greeting>(...)`), else the text. */
// biome-ignore lint/suspicious/noExplicitAny: by default tests read arbitrary JSON
export interface InjectResponse<B = any> {
  status: number;
  headers: Record<string, unknown>;
  body: B;
  text: string;
}

/** A service given to the plugin under test (see {@link fakeService}). */
export interface ServiceFake {
  readonly token: ServiceToken<unknown>;
  readonly value: unknown;
}

/**
 * A typed fake of a service for {@link startPluginHarness} (Backstage's `mockServices` are the model): the methods
 * given are the service's, type-checked against its interface; any other one the plugin calls throws, naming the
 * service and the method, so a test says exactly what the plugin uses.
 */
export function fakeService<T extends object>(token: ServiceToken<T>, impl: Partial<T>): ServiceFake {
  const value = new Proxy(impl, {
    get(target, key, receiver) {
      if (key in target || typeof key === "symbol" || key === "then") return Reflect.get(target, key, receiver);
      return () => {
        throw new Error(`fake service "${token.id}": ${String(key)} is not implemented by the test`);
      };
    },
  });
  return { token: token as ServiceToken<unknown>, value };
}

export interface PluginHarness {
  readonly home: string;
  /** The plugin as `GET /server/status` reports it (state, capabilities held and denied, contributions). */
  status(): PluginStatus;
  /** What the plugin contributed (through the real registries). */
  readonly tools: ToolDefinition[];
  readonly routes: AnyRoute[];
  readonly commands: SlashCommand[];
  readonly personas: Persona[];
  readonly themes: Theme[];
  readonly providers: Provider[];
  /**
   * Calls one of its tools with a test `ToolContext` (override `cwd`, `signal`, `confirm`...): by name, or by its
   * definition (`defineTool`'s result), which types the arguments.
   */
  callTool<A = Record<string, unknown>>(
    tool: string | ToolDefinition<A>,
    args: A,
    ctx?: Partial<ToolContext>,
  ): Promise<ToolResult>;
  /** Calls a route through the daemon's real HTTP stack (auth, validation, errors), without a socket. */
  // biome-ignore lint/suspicious/noExplicitAny: by default tests read arbitrary JSON
  inject<B = any>(method: string, path: string, body?: unknown, opts?: InjectOptions): Promise<InjectResponse<B>>;
  /** The host's services (unrestricted: the test's view, not the plugin's). */
  get<T>(token: ServiceToken<T>): T;
  /** The event bus the plugin's `ctx.events` listens on. */
  readonly bus: EventBus;
  /** Calls the plugin's `stop`, disposes its contributions and removes a temporary home. */
  stop(): Promise<void>;
}

/**
 * Runs a plugin the way the daemon does (`agentd/testing`): the real plugin loader validates its options,
 * enforces its capabilities, calls `register` and `start`; contributions land in the real registries and routes are
 * served by the real HTTP stack, which `inject` calls in-process. For whole-daemon tests use `startTestDaemon`.
 */
export async function startPluginHarness(
  plugin: Plugin | PluginDefinition,
  opts: PluginHarnessOptions = {},
): Promise<PluginHarness> {
  const manifest = manifestFor(plugin, opts);
  const ownHome = opts.home === undefined;
  const home = opts.home ?? mkdtempSync(join(tmpdir(), "agentd-plugin-"));
  const log = opts.log ?? silentLogger;
  const id = manifest.id;
  const registries = createRegistries();
  const bus = new SyncEventBus(log);
  const services = new ServiceContainer();
  const settings = new LayeredSettings({ home, version: "test", config: {}, env: {}, defaultCwd: home, user: {} });
  provideHostServices(services, { log, bus, settings, registries });
  services.provide("host", DocumentStoreToken, new FileDocuments(home));
  for (const { token, value } of opts.services ?? []) services.provide("host", token, value);

  const thirdParty = (opts.origin ?? "third-party") === "third-party";
  const source: PluginSource = {
    manifest,
    origin: thirdParty ? "config" : "builtin",
    spec: thirdParty ? `./${id}` : id,
    load: async () => plugin,
  };
  const host = new PluginHost({
    services,
    registries,
    bus,
    log,
    home,
    options: opts.options ? { [id]: opts.options } : {},
    disabled: [],
    granted: { [id]: opts.grant ?? manifest.capabilities ?? [] },
  });
  await host.load([...(opts.plugins ?? []).map(builtinSource), source]);
  await host.start();
  const status = () => host.statuses().find((s) => s.id === id) as PluginStatus;
  if (status().state !== "active" && !opts.allowFailure) {
    await host.stop();
    if (ownHome) rmSync(home, { recursive: true, force: true });
    throw new Error(`plugin "${id}" did not load: ${status().error ?? status().state}`);
  }

  const token = randomBytes(18).toString("base64url");
  const app = createApp({
    routes: registries.routes,
    auth: new Authenticator(token),
    log,
    hub: new SseHub(),
    allowedHosts: new Set(),
    maxBodyBytes: 1024 * 1024,
    sseQueueBytes: 1024 * 1024,
    validateResponses: true,
    version: "test",
  });
  // Express swaps the response's prototype for its own, which would drop the injected response's methods: pin
  // them on the instance first.
  const pinned = (req: IncomingMessage, res: ServerResponse) => {
    const r = res as unknown as Record<string, unknown>;
    for (const m of ["setTimeout", "writeHead", "write", "end", "destroy", "addTrailers"]) {
      const fn = r[m];
      if (typeof fn === "function") r[m] = fn.bind(res);
    }
    app(req, res);
  };
  const mine = <T>(reg: Registry<T>) =>
    reg
      .entries()
      .filter((e) => e.owner === id)
      .map((e) => e.item);
  let stopped = false;
  return {
    home,
    status,
    get tools() {
      return mine(registries.tools);
    },
    get routes() {
      return mine(registries.routes);
    },
    get commands() {
      return mine(registries.commands);
    },
    get personas() {
      return mine(registries.personas);
    },
    get themes() {
      return mine(registries.themes);
    },
    get providers() {
      return mine(registries.providers);
    },
    async callTool(which, args, ctx = {}) {
      const name = typeof which === "string" ? which : which.name;
      const tool = registries.tools.get(name);
      if (!tool || registries.tools.ownerOf(name) !== id) throw new Error(`plugin "${id}" has no tool "${name}"`);
      return tool.execute(args as Record<string, unknown>, makeToolContext({ cwd: home, ...ctx }));
    },
    async inject(method, path, body, injectOpts = {}) {
      const headers: Record<string, string> = { host: "127.0.0.1", ...injectOpts.headers };
      if (injectOpts.auth !== false) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers["content-type"] ??= "application/json";
      const url = injectOpts.page || path.startsWith("/api/") ? path : `/api/v1${path}`;
      const res = await lightInject(pinned, {
        method: method.toUpperCase() as "GET",
        url,
        headers,
        remoteAddress: "127.0.0.1",
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
      const text = res.payload;
      const json = String(res.headers["content-type"] ?? "").includes("json") && text !== "";
      return { status: res.statusCode, headers: res.headers, body: json ? JSON.parse(text) : text, text };
    },
    get: (t) => services.get(t),
    bus,
    async stop() {
      if (stopped) return;
      stopped = true;
      await host.stop();
      await services.dispose();
      if (ownHome) rmSync(home, { recursive: true, force: true });
    },
  };
}

/** The manifest the daemon would read: the one given, package.json's `agentd` key, or the code's own. */
function manifestFor(plugin: Plugin | PluginDefinition, opts: PluginHarnessOptions): PluginManifest {
  if (opts.manifest) return opts.manifest;
  if (plugin.manifest && opts.packageJson === undefined) return plugin.manifest;
  const given = opts.packageJson instanceof URL ? fileURLToPath(opts.packageJson) : (opts.packageJson ?? ".");
  const file = resolve(given.endsWith(".json") ? given : join(given, "package.json"));
  try {
    return readPluginPackage(file).manifest;
  } catch (err) {
    throw new Error(
      `${(err as Error).message}${plugin.manifest ? "" : " (the plugin states no manifest in its code: pass { packageJson } or { manifest })"}`,
    );
  }
}
