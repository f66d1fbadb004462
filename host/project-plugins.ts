import { errorMessage } from "../core/errors.js";
import {
  type Capability,
  isCapability,
  type ProjectPluginInfo,
  type ProjectTrust,
  pluginState,
  scanProjectPlugins,
} from "../core/index.js";
import { PluginHost, type PluginHostDeps, type PluginStatus } from "./loader.js";
import { type PluginSource, thirdPartySource } from "./plugin-sources.js";

/** Capabilities a trust decision cannot give: the global config must (`pluginCapabilities.<id>`). */
export const CONFIG_ONLY_CAPABILITIES: readonly Capability[] = ["secrets"];

interface Loaded {
  host: PluginHost;
  /** name -> content hash of what was loaded. */
  hashes: Map<string, string>;
}

export interface ProjectPluginsDeps extends Omit<PluginHostDeps, "granted" | "projectRoot"> {
  trust: ProjectTrust;
  /** `pluginCapabilities` of the config. */
  granted: Record<string, readonly string[]>;
  /** Ids already taken (the daemon's own plugins). */
  takenIds: () => string[];
}

/**
 * Project-local plugins (`<project>/.agentd/plugins/<name>/`): loaded, one PluginHost per project root, only while
 * the project is trusted and each plugin's content hash matches the one trust was pinned to. Their tools, commands
 * and personas are tagged with the root (other projects' sessions do not see them).
 */
export class ProjectPlugins {
  private readonly loaded = new Map<string, Loaded>();
  private readonly queues = new Map<string, Promise<void>>();

  constructor(private readonly deps: ProjectPluginsDeps) {}

  /** The plugins of `root` that may run now: the project is trusted and the plugin is unchanged since. */
  private wanted(root: string): ProjectPluginInfo[] {
    const pins = this.deps.trust.pins(root);
    if (!pins) return [];
    return scanProjectPlugins(root).filter((p) => pluginState(p, pins) === "trusted");
  }

  private same(cur: Loaded, wanted: ProjectPluginInfo[]): boolean {
    return cur.hashes.size === wanted.length && wanted.every((p) => cur.hashes.get(p.name) === p.hash);
  }

  /**
   * Synchronously withdraws the plugins of `root` when they no longer match the trust decision (a file changed,
   * a plugin was added or removed); true when a (re)load is due.
   */
  check(root: string): boolean {
    const wanted = this.wanted(root);
    const cur = this.loaded.get(root);
    if (cur && this.same(cur, wanted)) return false;
    if (cur) {
      this.loaded.delete(root);
      void cur.host.unload();
    }
    return wanted.length > 0;
  }

  /** Loads or unloads the plugins of `root` to match the trust decision; one change at a time per root. */
  reconcile(root: string): Promise<void> {
    const next = (this.queues.get(root) ?? Promise.resolve()).then(() =>
      this.apply(root).catch((err) => this.deps.log.error({ err, root }, "project plugins failed to load")),
    );
    this.queues.set(root, next);
    void next.finally(() => {
      if (this.queues.get(root) === next) this.queues.delete(root);
    });
    return next;
  }

  private async apply(root: string): Promise<void> {
    const wanted = this.wanted(root);
    const cur = this.loaded.get(root);
    if (cur && this.same(cur, wanted)) return;
    if (cur) {
      this.loaded.delete(root);
      await cur.host.unload();
    }
    if (wanted.length === 0) return;
    const taken = new Set([...this.deps.takenIds(), ...[...this.loaded.values()].flatMap((l) => ids(l.host))]);
    const sources: PluginSource[] = [];
    const granted: Record<string, Capability[]> = {};
    const hashes = new Map<string, string>();
    for (const p of wanted) {
      let src: PluginSource;
      try {
        src = thirdPartySource(p.dir, this.deps.home, { origin: "project", version: p.hash.slice(0, 16) });
      } catch (err) {
        this.deps.log.warn({ root, plugin: p.name }, `project plugin skipped: ${errorMessage(err)}`);
        continue;
      }
      const id = src.manifest.id;
      if (taken.has(id)) {
        this.deps.log.warn({ root, plugin: p.name }, `project plugin skipped: the id "${id}" is already in use`);
        continue;
      }
      taken.add(id);
      // A project plugin is never "required": it must not be able to stop the daemon.
      sources.push({ ...src, manifest: { ...src.manifest, required: false } });
      hashes.set(p.name, p.hash);
      const declared = Array.isArray(src.manifest.capabilities) ? src.manifest.capabilities.filter(isCapability) : [];
      const fromConfig = (this.deps.granted[id] ?? []).filter(isCapability);
      // Trusting the project allows what the manifest declares, except what only the global config may allow.
      granted[id] = [...new Set([...declared.filter((c) => !CONFIG_ONLY_CAPABILITIES.includes(c)), ...fromConfig])];
    }
    if (sources.length === 0) return;
    const host = new PluginHost({ ...this.deps, granted, projectRoot: root });
    this.loaded.set(root, { host, hashes });
    await host.load(sources);
    await host.start();
  }

  /** Every loaded project plugin, with its project root. */
  statuses(): PluginStatus[] {
    return [...this.loaded].flatMap(([root, l]) => l.host.statuses().map((s) => ({ ...s, project: root })));
  }

  async unloadAll(): Promise<void> {
    const all = [...this.loaded.values()];
    this.loaded.clear();
    for (const l of all) await l.host.unload();
  }
}

function ids(host: PluginHost): string[] {
  return host.statuses().map((s) => s.id);
}
