import { ProjectTrustToken } from "../core/project.js";
import { builtinPlugins } from "../plugins/index.js";
import type { LoadedConfig } from "./config.js";
import type { ServiceContainer } from "./container.js";
import { builtinSource, type PluginSource, thirdPartySource } from "./plugin-sources.js";
import { ProjectPlugins, type ProjectPluginsDeps } from "./project-plugins.js";

/**
 * The daemon's plugins in load order: the built-in ones (or `builtins`), those the config names (an unreadable one
 * becomes a plugin that fails to load, with its reason), then `extra`.
 */
export function pluginSources(
  cfg: LoadedConfig["config"],
  home: string,
  opts: { builtins?: PluginSource[]; extra?: PluginSource[] },
): PluginSource[] {
  const sources: PluginSource[] = [...(opts.builtins ?? builtinPlugins.map(builtinSource))];
  for (const spec of cfg.plugins ?? []) {
    try {
      sources.push(thirdPartySource(spec, home));
    } catch (err) {
      sources.push(brokenSource(spec, (err as Error).message));
    }
  }
  sources.push(...(opts.extra ?? []));
  return sources;
}

/**
 * The session store: `storage-postgres` on the database `AGENTD_DATABASE_URL` (or the config key `database.url`)
 * names, else the built-in `storage-sqlite`; the other one is disabled.
 */
export function storageChoice(
  cfg: LoadedConfig["config"],
  env: NodeJS.ProcessEnv,
  team: { daemonId: string; version: string },
): { options: Record<string, object>; disabled: string[] } {
  const options = (cfg.pluginOptions ?? {}) as Record<string, object>;
  const disabled = cfg.disabledPlugins ?? [];
  const url = env.AGENTD_DATABASE_URL || cfg.database?.url;
  if (!url) return { options, disabled: [...disabled, "storage-postgres"] };
  // The team's lease timeout (a dead owner's turn is taken over after it): AGENTD_LEASE_TIMEOUT_MS wins.
  const fromEnv = Number(env.AGENTD_LEASE_TIMEOUT_MS);
  const leaseTimeoutMs =
    env.AGENTD_LEASE_TIMEOUT_MS && Number.isInteger(fromEnv) && fromEnv >= 300 ? fromEnv : cfg.database?.leaseTimeoutMs;
  const pgOptions = { url, ...team, ...(leaseTimeoutMs !== undefined ? { leaseTimeoutMs } : {}) };
  return { options: { ...options, "storage-postgres": pgOptions }, disabled: [...disabled, "storage-sqlite"] };
}

function brokenSource(spec: string, message: string): PluginSource {
  const id =
    spec
      .replace(/[^a-z0-9-]+/gi, "-")
      .replace(/^-+|-+$/g, "")
      .toLowerCase()
      .slice(0, 64) || "unknown";
  return {
    manifest: { id, version: "0.0.0", description: `unreadable plugin ${spec}` },
    origin: "config",
    spec,
    load: async () => {
      throw new Error(message);
    },
  };
}

/**
 * Project-local plugins, when the project plugin provides trust: those of every trusted project load now; a trust
 * decision loads or unloads them (POST /projects/trust waits); a turn withdraws a plugin changed since trust.
 */
export async function startProjectPlugins(
  deps: Omit<ProjectPluginsDeps, "trust"> & { services: ServiceContainer },
): Promise<ProjectPlugins | undefined> {
  const trust = deps.services.tryGet(ProjectTrustToken);
  if (!trust) return undefined;
  const plugins = new ProjectPlugins({ ...deps, trust });
  trust.onChange((root) => plugins.reconcile(root));
  deps.bus.on("turn.started", ({ cwd }) => {
    const root = trust.projectRoot(cwd);
    if (plugins.check(root)) void plugins.reconcile(root);
  });
  for (const rec of trust.list()) if (rec.trusted) await plugins.reconcile(rec.path);
  return plugins;
}
