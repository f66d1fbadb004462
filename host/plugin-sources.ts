import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { importModule } from "../core/import-module.js";
import type { Plugin, PluginDefinition, PluginManifest } from "../core/plugin.js";

/** A plugin before it runs: its manifest is known, its code may not be imported yet. */
export interface PluginSource {
  manifest: PluginManifest;
  origin: "builtin" | "config" | "project";
  /** What the config named (a path or a package name); the id for built-ins. */
  spec: string;
  /** Imports its code (a third-party plugin's has no manifest: the loader attaches this one). */
  load(): Promise<PluginDefinition>;
}

export function builtinSource(plugin: Plugin): PluginSource {
  return { manifest: plugin.manifest, origin: "builtin", spec: plugin.manifest.id, load: async () => plugin };
}

interface PackageJson {
  name?: string;
  main?: string;
  exports?: unknown;
  agentd?: PluginManifest;
}

/**
 * Reads a third-party plugin's manifest from its package.json `agentd` key without importing its code.
 * `spec` is a folder path (absolute, or relative to the daemon home) or a package name resolved from `<home>/plugins`
 * (where `agentd plugin add` installs), the home's node_modules, then the daemon's own.
 */
export function thirdPartySource(
  spec: string,
  home: string,
  opts: { origin?: "config" | "project"; version?: string } = {},
): PluginSource {
  const pkgFile = locatePackageJson(spec, home);
  let pkg: PackageJson;
  try {
    pkg = JSON.parse(readFileSync(pkgFile, "utf8")) as PackageJson;
  } catch (err) {
    throw new Error(`plugin "${spec}": cannot read ${pkgFile}: ${(err as Error).message}`);
  }
  const manifest = pkg.agentd;
  if (!manifest || typeof manifest !== "object" || typeof manifest.id !== "string") {
    throw new Error(`plugin "${spec}": ${pkgFile} has no "agentd" manifest with an id`);
  }
  const dir = dirname(pkgFile);
  const entry = resolve(dir, entryOf(pkg));
  return {
    manifest,
    origin: opts.origin ?? "config",
    spec,
    async load() {
      // A version (a project plugin's content hash) makes a changed entry module load afresh, not from the cache.
      const url = pathToFileURL(entry).href + (opts.version ? `?v=${opts.version}` : "");
      const mod = await importModule<{ default?: PluginDefinition; plugin?: PluginDefinition }>(url);
      const plugin = mod.default ?? mod.plugin;
      if (!plugin || typeof plugin.register !== "function") {
        throw new Error(`${entry} does not export a plugin (default export of definePlugin(...))`);
      }
      return plugin;
    },
  };
}

function locatePackageJson(spec: string, home: string): string {
  if (spec.startsWith(".") || isAbsolute(spec)) {
    return join(isAbsolute(spec) ? spec : resolve(home, spec), "package.json");
  }
  // Installed with `agentd plugin add` (<home>/plugins), then the home's node_modules, then agentd's own.
  for (const base of [join(home, "plugins", "package.json"), join(home, "package.json"), import.meta.url]) {
    try {
      return createRequire(base).resolve(`${spec}/package.json`);
    } catch {
      // try the next place
    }
  }
  throw new Error(
    `plugin package "${spec}" not found (looked in ${home}/plugins/node_modules, ${home}/node_modules and agentd's own)`,
  );
}

function entryOf(pkg: PackageJson): string {
  const exp = pkg.exports;
  if (typeof exp === "string") return exp;
  if (exp && typeof exp === "object") {
    const root = (exp as Record<string, unknown>)["."] ?? exp;
    if (typeof root === "string") return root;
    if (root && typeof root === "object") {
      const r = root as Record<string, unknown>;
      const pick = r.import ?? r.default ?? r.node;
      if (typeof pick === "string") return pick;
    }
  }
  return pkg.main ?? "index.js";
}
