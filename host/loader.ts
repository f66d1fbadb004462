import type { DependencyContainer } from "tsyringe";
import { monotonicMs } from "../core/clock.js";
import type { Persona, Provider, SlashCommand, Theme, ToolDefinition } from "../core/contributions.js";
import { DisposableStore } from "../core/disposable.js";
import { errorMessage } from "../core/errors.js";
import type { EventBus } from "../core/events.js";
import type { Logger } from "../core/logger.js";
import {
  CAPABILITIES,
  type Capability,
  isCapability,
  type Plugin,
  type PluginContext,
  type PluginManifest,
} from "../core/plugin.js";
import type { Registry } from "../core/registry.js";
import type { AnyRoute } from "../core/routes.js";
import type { ServiceContainer } from "./container.js";
import { RENAMED_CAPABILITIES } from "./plugin-access.js";
import { pluginContext } from "./plugin-context.js";
import { attachManifest } from "./plugin-manifest.js";
import { PluginOptionsValidator } from "./plugin-options.js";
import type { PluginSource } from "./plugin-sources.js";

export interface Registries {
  routes: Registry<AnyRoute>;
  tools: Registry<ToolDefinition>;
  personas: Registry<Persona>;
  themes: Registry<Theme>;
  commands: Registry<SlashCommand>;
  providers: Registry<Provider>;
}

export type PluginState = "active" | "failed" | "disabled";

export interface PluginStatus {
  id: string;
  version: string;
  description: string;
  origin: "builtin" | "config" | "project";
  /** Project plugins: the project root. */
  project?: string;
  state: PluginState;
  error?: string;
  required: boolean;
  /** The capabilities the plugin holds. */
  capabilities: string[];
  /** Declared in the manifest but not allowed in the config (`pluginCapabilities.<id>`): not held. */
  deniedCapabilities: string[];
  bootMs: number;
  contributions: Record<keyof Registries, number>;
}

export class FatalPluginError extends Error {}

export interface Entry {
  source: PluginSource;
  manifest: PluginManifest;
  plugin?: Plugin;
  ctx?: PluginContext;
  state: PluginState | "pending";
  error?: string;
  bootMs: number;
  scope: DisposableStore;
  /** The plugin's child container (the tokens it declared), disposed when it unloads. */
  di?: DependencyContainer;
  held: Set<Capability>;
  denied: Capability[];
}

const ID_RE = /^[a-z0-9][a-z0-9-]{0,63}$/;

export interface PluginHostDeps {
  services: ServiceContainer;
  registries: Registries;
  bus: EventBus;
  log: Logger;
  home: string;
  options: Record<string, object>;
  disabled: string[];
  /** Capabilities the config allows each third-party plugin (`pluginCapabilities`). */
  granted?: Record<string, readonly string[]>;
  /** Project-local plugins: their tools, commands and personas are tagged with (visible only to) this root. */
  projectRoot?: string;
}

/**
 * Loads plugins in dependency order and contains their failures: a plugin that throws in `register` or
 * `start` (or whose requirements are missing) is unloaded (its contributions disposed) and reported, and the
 * daemon goes on, unless the plugin is marked required.
 */
export class PluginHost {
  private readonly entries: Entry[] = [];
  private readonly optionsValidator = new PluginOptionsValidator();

  constructor(private readonly deps: PluginHostDeps) {}

  /** Resolves manifests, orders by `requires`, imports and registers each plugin. */
  async load(sources: PluginSource[]): Promise<void> {
    const seen = new Set<string>();
    for (const source of sources) {
      const m = source.manifest;
      const entry: Entry = {
        source,
        manifest: m,
        state: "pending",
        bootMs: 0,
        scope: new DisposableStore(),
        held: new Set(),
        denied: [],
      };
      this.entries.push(entry);
      const badCap = (Array.isArray(m.capabilities) ? m.capabilities : []).find((c) => !isCapability(c));
      if (m.capabilities !== undefined && !Array.isArray(m.capabilities)) {
        this.fail(entry, `the manifest's "capabilities" must be an array of names`);
      } else if (badCap !== undefined) {
        const hint = RENAMED_CAPABILITIES[String(badCap)]
          ? ` (now called "${RENAMED_CAPABILITIES[String(badCap)]}")`
          : "";
        this.fail(
          entry,
          `unknown capability "${String(badCap)}"${hint}; known: ${Object.keys(CAPABILITIES).join(", ")}`,
        );
      } else if (!ID_RE.test(m.id)) this.fail(entry, `invalid plugin id "${m.id}" (kebab-case, max 64 chars)`);
      else if (seen.has(m.id)) this.fail(entry, `another plugin already has the id "${m.id}"`);
      else if (this.deps.disabled.includes(m.id)) {
        if (m.required) throw new FatalPluginError(`plugin "${m.id}" is required and cannot be disabled`);
        entry.state = "disabled";
      }
      seen.add(m.id);
      this.grant(entry);
    }
    for (const entry of this.order()) {
      // What package.json requires is checked before its code is imported; what its `deps` add, after.
      if (entry.state !== "pending" || !this.requirementsMet(entry)) continue;
      const t0 = monotonicMs();
      try {
        // The manifest read before the code ran (package.json's for a third-party plugin) is the one it runs with.
        entry.plugin = attachManifest(await entry.source.load(), entry.manifest);
      } catch (err) {
        this.fail(entry, `cannot load: ${errorMessage(err)}`, err);
        entry.bootMs = monotonicMs() - t0;
        continue;
      }
      entry.manifest = entry.plugin.manifest;
      if (!this.requirementsMet(entry)) continue;
      try {
        entry.ctx = pluginContext(entry, this.deps, this.optionsValidator);
        entry.plugin.register(entry.ctx);
        entry.state = "active";
      } catch (err) {
        this.fail(entry, `register failed: ${errorMessage(err)}`, err);
      }
      entry.bootMs = monotonicMs() - t0;
    }
  }

  /** Runs every active plugin's `start` in order, each bounded by its timeout. */
  async start(): Promise<void> {
    for (const entry of this.order()) {
      if (entry.state !== "active" || !entry.plugin?.start || !entry.ctx) continue;
      const t0 = monotonicMs();
      try {
        await withTimeout(
          Promise.resolve(entry.plugin.start(entry.ctx)),
          entry.manifest.startTimeoutMs ?? 10_000,
          "start",
        );
      } catch (err) {
        this.fail(entry, `start failed: ${errorMessage(err)}`, err);
      }
      entry.bootMs += monotonicMs() - t0;
    }
  }

  /** Stops active plugins in reverse order and disposes their contributions. */
  async stop(): Promise<void> {
    for (const entry of this.order().reverse()) {
      if (entry.state !== "active") continue;
      try {
        if (entry.plugin?.stop && entry.ctx)
          await withTimeout(Promise.resolve(entry.plugin.stop(entry.ctx)), 5000, "stop");
      } catch (err) {
        this.deps.log.error({ err, plugin: entry.manifest.id }, "plugin stop failed");
      }
      entry.scope.dispose();
      entry.state = "disabled";
      await this.release(entry);
    }
  }

  /** Withdraws every contribution at once (synchronously), then runs the `stop` hooks in reverse order. */
  async unload(): Promise<void> {
    const active = this.order()
      .reverse()
      .filter((e) => e.state === "active");
    for (const entry of active) {
      entry.scope.dispose();
      entry.state = "disabled";
    }
    for (const entry of active) {
      try {
        if (entry.plugin?.stop && entry.ctx)
          await withTimeout(Promise.resolve(entry.plugin.stop(entry.ctx)), 5000, "stop");
      } catch (err) {
        this.deps.log.error({ err, plugin: entry.manifest.id }, "plugin stop failed");
      }
      await this.release(entry);
    }
  }

  /** Disposes the plugin's container: what it constructed is disposed, and it resolves nothing more. */
  private async release(entry: Entry): Promise<void> {
    const di = entry.di;
    entry.di = undefined;
    try {
      await di?.dispose();
    } catch (err) {
      this.deps.log.warn({ err, plugin: entry.manifest.id }, "dispose failed");
    }
  }

  /** Built-ins hold what they declare; a third-party plugin what it declares and the config allows. */
  private grant(entry: Entry): void {
    const declared = (Array.isArray(entry.manifest.capabilities) ? entry.manifest.capabilities : []).filter(
      isCapability,
    );
    const allowed = entry.source.origin === "builtin" ? undefined : (this.deps.granted?.[entry.manifest.id] ?? []);
    for (const cap of declared) {
      if (!allowed || allowed.includes(cap)) entry.held.add(cap);
      else if (!entry.denied.includes(cap)) entry.denied.push(cap);
    }
  }

  statuses(): PluginStatus[] {
    const r = this.deps.registries;
    return this.entries.map((e) => {
      const id = e.manifest.id;
      const s: PluginStatus = {
        id,
        version: String(e.manifest.version ?? ""),
        description: String(e.manifest.description ?? ""),
        origin: e.source.origin,
        state: e.state === "pending" ? "failed" : e.state,
        required: e.manifest.required === true,
        capabilities: [...e.held],
        deniedCapabilities: [...e.denied],
        bootMs: Math.round(e.bootMs * 100) / 100,
        contributions: {
          routes: r.routes.countBy(id),
          tools: r.tools.countBy(id),
          personas: r.personas.countBy(id),
          themes: r.themes.countBy(id),
          commands: r.commands.countBy(id),
          providers: r.providers.countBy(id),
        },
      };
      if (e.error) s.error = e.error;
      return s;
    });
  }

  private fail(entry: Entry, message: string, err?: unknown): void {
    const id = entry.manifest.id;
    entry.state = "failed";
    entry.error = message;
    for (const e of entry.scope.dispose()) this.deps.log.warn({ err: e, plugin: id }, "dispose failed");
    void this.release(entry);
    this.deps.log.error({ plugin: id, err }, `plugin ${id}: ${message}`);
    if (entry.manifest.required) throw new FatalPluginError(`required plugin "${id}" failed: ${message}`);
    // Plugins that depended on this one cannot keep running.
    const provided = new Set([id, ...(entry.manifest.provides ?? [])]);
    for (const other of this.entries) {
      if (other.state !== "active") continue;
      const dep = (other.manifest.requires ?? []).find((r) => provided.has(r) && !this.hostProvides(r));
      if (dep) this.fail(other, `requires "${dep}", which failed`);
    }
  }

  /**
   * A service of the host's own (a registry, the settings, the session service): a requirement of it is met from
   * the start, even where a plugin has the same id (the `settings`, `sessions`, `commands` ... plugins).
   */
  private hostProvides(id: string): boolean {
    return this.deps.services.ownerOf(id) === "host";
  }

  /** Whether every requirement is loaded; fails the plugin, naming the first missing one, if not. */
  private requirementsMet(entry: Entry): boolean {
    const missing = this.missingRequirement(entry.manifest);
    if (missing) this.fail(entry, `requires "${missing}", which no loaded plugin provides`);
    return missing === undefined;
  }

  private missingRequirement(m: PluginManifest): string | undefined {
    for (const req of m.requires ?? []) {
      if (this.deps.services.has(req)) continue;
      const provider = this.entries.find(
        (e) => e.state === "active" && (e.manifest.id === req || (e.manifest.provides ?? []).includes(req)),
      );
      if (!provider) return req;
    }
    return undefined;
  }

  /** Topological order by `requires` (stable: otherwise the given order). Cycles are reported as failures. */
  private order(): Entry[] {
    const byKey = new Map<string, Entry>();
    for (const e of this.entries) {
      byKey.set(e.manifest.id, e);
      // A disabled (or already failed) plugin provides nothing: another one's `provides` orders its dependents.
      if (e.state !== "pending") continue;
      for (const p of e.manifest.provides ?? []) if (!byKey.has(p)) byKey.set(p, e);
    }
    const out: Entry[] = [];
    const mark = new Map<Entry, "visiting" | "done">();
    const visit = (e: Entry, path: string[]) => {
      const st = mark.get(e);
      if (st === "done") return;
      if (st === "visiting") {
        if (e.state === "pending") this.fail(e, `dependency cycle: ${[...path, e.manifest.id].join(" -> ")}`);
        return;
      }
      mark.set(e, "visiting");
      for (const req of e.manifest.requires ?? []) {
        const dep = this.hostProvides(req) ? undefined : byKey.get(req);
        if (dep && dep !== e) visit(dep, [...path, e.manifest.id]);
      }
      mark.set(e, "done");
      out.push(e);
    };
    for (const e of this.entries) visit(e, []);
    return out;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
