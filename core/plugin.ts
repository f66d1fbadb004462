import type { Static, TSchema } from "@sinclair/typebox";
import type { CommandInvocation, Persona, Provider, SlashCommand, Theme, ToolDefinition } from "./contributions.js";
import type { Disposable } from "./disposable.js";
import type { DocumentStore } from "./documents.js";
import type { BusEvents, EventHandler } from "./events.js";
import type { Logger } from "./logger.js";
import type { AnyRoute } from "./routes.js";
import type { ServiceToken } from "./tokens.js";

/**
 * What a plugin may do, declared in its manifest. Built-in plugins hold what they declare; a third-party plugin holds
 * what it declares AND the user allowed in the config (`pluginCapabilities.<id>`). The host enforces the first five
 * (and `provider`); `process`, `network` and `filesystem` are declarations users see in `GET /server/status` and
 * `agentd plugin list` (policy, not a sandbox: plugins run in the daemon's process).
 */
export const CAPABILITIES = {
  secrets: "read secrets: the provider API key, the raw config, MCP server headers (SettingsToken, McpManagerToken)",
  routes: "add HTTP routes (third-party routes are mounted under /api/v1/plugins/<id>)",
  "public-routes": "add routes that need no authentication",
  pages: "serve browser pages outside /api/v1 (third-party pages under /plugins/<id>/)",
  storage:
    "keep files in its data directory (ctx.dataDir()), its own documents (ctx.documents()), or provide the session store",
  provider: "contribute model providers",
  process: "start processes",
  network: "make network requests",
  filesystem: "read or write files outside its data directory",
} as const;

export type Capability = keyof typeof CAPABILITIES;

export function isCapability(name: unknown): name is Capability {
  return typeof name === "string" && Object.hasOwn(CAPABILITIES, name);
}

export interface PluginManifest {
  /** kebab-case, unique. Third-party routes are mounted under `/api/v1/plugins/<id>`. */
  id: string;
  version: string;
  description: string;
  /** Plugin ids or service ids (`ServiceToken.id`) that must be available first. */
  requires?: string[];
  /** Service ids this plugin provides with `ctx.services.provide`. */
  provides?: string[];
  capabilities?: Capability[];
  /** A required plugin that fails stops the daemon; any other is unloaded and reported. */
  required?: boolean;
  /**
   * JSON Schema of this plugin's options (config key `pluginOptions.<id>`), validated before `register`. In code,
   * give it as `definePlugin({options})`; in package.json it serves plugins written in plain JavaScript.
   */
  configSchema?: TSchema;
  /** Upper bound for `start`; default 10 s. */
  startTimeoutMs?: number;
}

export interface ServiceAccess {
  /** Registers a service under a token declared in the manifest's `provides`. */
  provide<T>(token: ServiceToken<T>, value: T): Disposable;
  /** Registers a class the plugin's container constructs (with tsyringe `@inject(token.symbol)` parameters). */
  provideClass<T>(token: ServiceToken<T>, cls: new (...args: never[]) => T): Disposable;
  /**
   * A service by token, with the capability checks. A plugin that declares `deps` may get only those (use
   * `ctx.deps`); this is for plugins without `deps` (plain-JS ones, say).
   */
  get<T>(token: ServiceToken<T>): T;
  tryGet<T>(token: ServiceToken<T>): T | undefined;
}

export interface ContributionPoint<T> {
  add(item: T): Disposable;
}

/** The options a plugin gets: the static type of its options schema (validated, defaults applied), else a record. */
export type OptionsOf<S extends TSchema> = TSchema extends S ? Record<string, unknown> : Static<S>;

/** A dependency the plugin works without: `ctx.deps.<key>` is undefined when nobody provides it. */
export interface OptionalDep<T> {
  readonly optional: ServiceToken<T>;
}

export function optional<T>(token: ServiceToken<T>): OptionalDep<T> {
  return { optional: token };
}

/** The services a plugin declares it uses, by key: a token (required) or `optional(token)`. */
export type DepsSpec = Record<string, ServiceToken<unknown> | OptionalDep<unknown>>;

/** `ctx.deps` for a `DepsSpec`: each key typed by its token. */
export type DepsOf<D> = {
  readonly [K in keyof D]: D[K] extends OptionalDep<infer T>
    ? T | undefined
    : D[K] extends ServiceToken<infer T>
      ? T
      : never;
};

export interface PluginContext<O = Record<string, unknown>, D = Record<string, unknown>> {
  readonly id: string;
  readonly manifest: PluginManifest;
  readonly log: Logger;
  /** The `pluginOptions.<id>` value validated against the plugin's options schema (defaults applied), or `{}`. */
  readonly options: O;
  /** The daemon home directory (AGENTD_HOME). */
  readonly home: string;
  /** A directory this plugin may use for its own files (`<home>/plugins-data/<id>`, created on first use). */
  dataDir(): string;
  /**
   * The plugin's own small documents (needs `storage`): files in its data directory on one daemon, rows of the
   * database on a team server, where every daemon sees them (and `watch` tells of another daemon's change).
   */
  documents(): DocumentStore;

  readonly routes: ContributionPoint<AnyRoute>;
  readonly tools: ContributionPoint<ToolDefinition>;
  readonly personas: ContributionPoint<Persona>;
  readonly themes: ContributionPoint<Theme>;
  readonly commands: ContributionPoint<SlashCommand>;
  readonly providers: ContributionPoint<Provider>;
  readonly services: ServiceAccess;
  /**
   * The services declared in the plugin's `deps`, typed, resolved from the plugin's own container (which holds
   * exactly those tokens) with the capability checks: a required one on first access and then kept, an optional one
   * until it is provided. A plugin that declares `deps` may `services.get` only those (and what it provides).
   */
  readonly deps: D;
  readonly events: {
    on<K extends keyof BusEvents>(type: K, handler: EventHandler<BusEvents[K]>): Disposable;
  };
  /** Adds a cleanup to run when the plugin is stopped or unloaded. */
  onDispose(d: Disposable | (() => void)): void;
}

/**
 * What `definePlugin` takes and a third-party plugin's module exports: its code. A built-in plugin (no package.json of
 * its own) carries its manifest here; a third-party plugin leaves it out, and the loader takes it from the `agentd`
 * key of its package.json (read before the code is imported) and attaches it.
 */
export interface PluginDefinition<O = Record<string, unknown>, D = Record<string, unknown>> {
  /**
   * Built-in plugins only. A third-party plugin that still states it must state what its package.json says (the
   * loader refuses a mismatch), or leave it out.
   */
  manifest?: PluginManifest;
  /**
   * The TypeBox schema of its options (config key `pluginOptions.<id>`): validated before `register`, defaults
   * applied, and the static type of `ctx.options`. (A built-in plugin may give it as `manifest.configSchema`.)
   */
  options?: TSchema;
  /** The services it uses, by token (Backstage's `deps`): typed in `ctx.deps`, required ones added to `requires`. */
  deps?: DepsSpec;
  /** Synchronous and declarative: add contributions, provide services. */
  register(ctx: PluginContext<O, D>): void;
  /** After every plugin registered, before the port opens. */
  start?(ctx: PluginContext<O, D>): Promise<void> | void;
  /** Reverse order at shutdown (contributions are disposed by the host afterwards). */
  stop?(ctx: PluginContext<O, D>): Promise<void> | void;
}

/** A plugin with its manifest: a built-in one as defined, a third-party one once the loader attached package.json's. */
export interface Plugin<O = Record<string, unknown>, D = Record<string, unknown>> extends PluginDefinition<O, D> {
  manifest: PluginManifest;
}

/** The ids of the services a plugin requires through its `deps` (not the optional ones). */
export function requiredDeps(plugin: Pick<PluginDefinition, "deps">): string[] {
  return Object.values(plugin.deps ?? {})
    .filter((d): d is ServiceToken<unknown> => !("optional" in d))
    .map((t) => t.id);
}

type Defined<S extends TSchema, D extends DepsSpec> = Omit<
  PluginDefinition<OptionsOf<S>, DepsOf<D>>,
  "manifest" | "options" | "deps"
> & { options?: S; deps?: D };

/**
 * Declares a plugin. A third-party plugin gives no manifest (package.json's `agentd` key is its manifest); a built-in
 * one gives it here. With `options` (a TypeBox schema), `ctx.options` has the schema's static type: the loader
 * validates `pluginOptions.<id>` against it (applying defaults) before `register`, and a plugin whose options are
 * invalid is not loaded. With `deps: {key: Token | optional(Token)}`, `ctx.deps.key` is the service, typed; the
 * required ones are added to the manifest's `requires`.
 */
export function definePlugin<S extends TSchema = TSchema, D extends DepsSpec = Record<never, never>>(
  plugin: Defined<S, D> & { manifest: PluginManifest & { configSchema?: S } },
): Plugin;
export function definePlugin<S extends TSchema = TSchema, D extends DepsSpec = Record<never, never>>(
  plugin: Defined<S, D> & { manifest?: undefined },
): PluginDefinition;
export function definePlugin(plugin: PluginDefinition): PluginDefinition {
  const required = requiredDeps(plugin);
  if (!plugin.manifest || !required.length) return plugin;
  // Required deps order the plugin after their providers and fail it cleanly when none is loaded.
  const requires = [...new Set([...(plugin.manifest.requires ?? []), ...required])];
  return { ...plugin, manifest: { ...plugin.manifest, requires } };
}

export type { CommandInvocation };
