import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Capability } from "../../core/plugin.js";
import { thirdPartySource } from "../plugin-sources.js";
import { readConfig, updateConfig } from "./config-file.js";
import { describeCapabilities, readPluginPackage } from "./manifest.js";

const run = promisify(execFile);

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Asks a yes/no question (interactive terminals only). */
  confirm?(question: string): Promise<boolean>;
}

/** `<home>/plugins`: an npm project whose dependencies are the installed plugins. */
export function pluginsDir(home: string): string {
  return join(home, "plugins");
}

/** This agentd's package folder (what `import "agentd"` in an installed plugin must reach). */
const AGENTD_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * Creates `<home>/plugins/package.json` when missing and makes `agentd` one of its dependencies, linked to this
 * agentd (`file:`): installed plugins import the running daemon's SDK, and npm satisfies their `agentd` peer
 * dependency with it instead of fetching the unrelated package of that name from the registry.
 */
function ensurePluginsProject(home: string): string {
  const dir = pluginsDir(home);
  mkdirSync(dir, { recursive: true });
  const pkg = join(dir, "package.json");
  let body: { dependencies?: Record<string, string>; [k: string]: unknown } = {
    name: "agentd-plugins",
    private: true,
    description: "Plugins installed with `agentd plugin add` (managed by agentd; listed in the config's `plugins`)",
    dependencies: {},
  };
  if (existsSync(pkg)) body = JSON.parse(readFileSync(pkg, "utf8"));
  const self = `file:${AGENTD_ROOT}`;
  if (body.dependencies?.agentd !== self) {
    body.dependencies = { ...body.dependencies, agentd: self };
    writeFileSync(pkg, `${JSON.stringify(body, null, 2)}\n`);
  }
  return dir;
}

function dependencies(dir: string): Record<string, string> {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    return pkg.dependencies ?? {};
  } catch {
    return {};
  }
}

/** Runs npm in the plugins project. Install scripts are not run: a plugin is code the daemon loads, nothing more. */
async function npm(dir: string, args: string[]): Promise<void> {
  try {
    await run("npm", [...args, "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: dir, maxBuffer: 16 << 20 });
  } catch (err) {
    const e = err as { stderr?: string; message: string; code?: unknown };
    if (e.code === "ENOENT") throw new Error("npm was not found on PATH; it installs plugins");
    const detail = (e.stderr ?? "")
      .split("\n")
      .filter((l) => /npm (error|ERR!)/.test(l))
      .slice(0, 6)
      .join("\n");
    throw new Error(`npm ${args[0]} failed${detail ? `:\n${detail}` : `: ${e.message}`}`);
  }
}

function isPathSpec(spec: string): boolean {
  return spec.startsWith(".") || isAbsolute(spec);
}

/** The package name an npm spec names (`name`, `name@1.2`, `@scope/name@^2`). */
function packageNameOf(spec: string): string {
  const at = spec.indexOf("@", spec.startsWith("@") ? 1 : 0);
  return at === -1 ? spec : spec.slice(0, at);
}

/**
 * `agentd plugin add <npm-package|path>`: installs it into `<home>/plugins` with npm, checks its manifest, shows the
 * capabilities it asks for and, once allowed (`--yes` or an interactive yes), records it in the config
 * (`plugins`, `pluginCapabilities.<id>`). Anything refused is uninstalled again. Returns the exit code.
 */
export async function addPlugin(home: string, spec: string, opts: { yes?: boolean }, io: CliIo): Promise<number> {
  let target = spec;
  let name: string;
  if (isPathSpec(spec)) {
    target = resolve(spec);
    if (!existsSync(target)) throw new Error(`${target} does not exist`);
    if (statSync(target).isFile()) {
      // A package tarball (`npm pack`): npm says which name it installed (below).
      if (!/\.(tgz|tar\.gz)$/.test(target)) throw new Error(`${target} is neither a folder nor a .tgz package`);
      name = basename(target);
    } else {
      if (!existsSync(join(target, "package.json"))) throw new Error(`${target} has no package.json`);
      name = readPluginPackage(join(target, "package.json")).name;
    }
  } else {
    name = packageNameOf(spec);
  }
  const cfg = readConfig(home);
  const dir = ensurePluginsProject(home);
  const before = dependencies(dir);
  await npm(dir, ["install", "--save-exact", target]);
  // The name npm recorded (specs such as a tarball URL or `github:user/repo` do not spell it).
  const after = dependencies(dir);
  const changed = Object.keys(after).filter((k) => before[k] !== after[k]);
  if (changed.length === 1 && changed[0]) name = changed[0];
  const rollback = async () => {
    if (!(name in before)) await npm(dir, ["uninstall", name]).catch(() => {});
  };
  let info: ReturnType<typeof readPluginPackage>;
  try {
    info = readPluginPackage(join(dir, "node_modules", name, "package.json"));
    const id = info.manifest.id;
    const { builtinPlugins } = await import("../../plugins/index.js");
    if (builtinPlugins.some((p) => p.manifest.id === id)) throw new Error(`"${id}" is the id of a built-in plugin`);
    for (const other of cfg.plugins ?? []) {
      if (other === name) continue;
      const otherId = safeManifestId(other, home);
      if (otherId === id) throw new Error(`the configured plugin "${other}" already has the id "${id}"`);
    }
  } catch (err) {
    await rollback();
    throw err;
  }
  const { id, version } = info.manifest;
  const caps = info.manifest.capabilities;
  io.out(
    `${id} ${version} (${name}): ${info.manifest.description}\nIt asks for these capabilities:\n${describeCapabilities(caps)}\n`,
  );
  let allowed = opts.yes === true || caps.length === 0;
  if (!allowed && io.confirm) allowed = await io.confirm("Allow them and enable the plugin?");
  if (!allowed) {
    await rollback();
    io.err(`Not enabled (nothing changed). Run again with --yes to allow: ${caps.join(", ")}\n`);
    return 1;
  }
  updateConfig(
    home,
    (c) => {
      c.plugins = [...(c.plugins ?? []).filter((p) => p !== name), name];
      c.pluginCapabilities = { ...c.pluginCapabilities, [id]: [...caps] };
    },
    `add "${name}" to "plugins" and ${JSON.stringify(caps)} to "pluginCapabilities.${id}"`,
  );
  io.out(`Enabled ${id}. A running daemon loads it at its next start.\n`);
  return 0;
}

function safeManifestId(spec: string, home: string): string | undefined {
  try {
    return thirdPartySource(spec, home).manifest.id;
  } catch {
    return undefined;
  }
}

/** `agentd plugin remove <id|package>`: drops it from the config and uninstalls it from `<home>/plugins`. */
export async function removePlugin(home: string, which: string, io: CliIo): Promise<number> {
  const cfg = readConfig(home);
  const spec = (cfg.plugins ?? []).find((s) => s === which || safeManifestId(s, home) === which);
  if (!spec) {
    io.err(`No configured plugin "${which}" (see agentd plugin list)\n`);
    return 1;
  }
  const id = safeManifestId(spec, home);
  updateConfig(
    home,
    (c) => {
      c.plugins = (c.plugins ?? []).filter((p) => p !== spec);
      if (id && c.pluginCapabilities) delete c.pluginCapabilities[id];
    },
    `remove "${spec}" from "plugins"`,
  );
  const dir = pluginsDir(home);
  if (!isPathSpec(spec) && spec in dependencies(dir)) await npm(dir, ["uninstall", spec]);
  io.out(`Removed ${id ?? spec}. A running daemon unloads it at its next start.\n`);
  return 0;
}

export interface ListedPlugin {
  spec: string;
  id?: string;
  version?: string;
  description?: string;
  /** What the manifest asks for. */
  requested: Capability[];
  /** What the config allows (`pluginCapabilities.<id>`). */
  allowed: string[];
  error?: string;
}

/** `agentd plugin list`: the configured third-party plugins with what they ask for and what they are allowed. */
export function listPlugins(home: string, opts: { json?: boolean }, io: CliIo): number {
  const cfg = readConfig(home);
  const rows: ListedPlugin[] = (cfg.plugins ?? []).map((spec) => {
    try {
      const m = thirdPartySource(spec, home).manifest;
      return {
        spec,
        id: m.id,
        version: String(m.version),
        description: String(m.description ?? ""),
        requested: m.capabilities ?? [],
        allowed: cfg.pluginCapabilities?.[m.id] ?? [],
      };
    } catch (err) {
      return { spec, requested: [], allowed: [], error: (err as Error).message };
    }
  });
  if (opts.json) {
    io.out(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  if (!rows.length) {
    io.out("No third-party plugins (agentd plugin add <npm-package|path>)\n");
    return 0;
  }
  for (const r of rows) {
    if (r.error) {
      io.out(`${r.spec}: ${r.error}\n`);
      continue;
    }
    const denied = r.requested.filter((c) => !r.allowed.includes(c));
    io.out(
      `${r.id} ${r.version} (${r.spec}): ${r.description}\n  capabilities: ${r.requested.join(", ") || "none"}` +
        `${denied.length ? `; not allowed: ${denied.join(", ")}` : ""}\n`,
    );
  }
  return 0;
}
