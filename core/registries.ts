import type { Persona, Provider, SlashCommand, Theme, ToolDefinition } from "./contributions.js";
import type { EventBus } from "./events.js";
import type { Logger } from "./logger.js";
import type { RegistryView } from "./registry.js";
import type { AnyRoute } from "./routes.js";
import { createToken } from "./tokens.js";

/** The host-owned contribution registries, readable by plugins that consume contributions (e.g. the agent loop). */
export const ToolRegistryToken = createToken<RegistryView<ToolDefinition>>("tools");
export const PersonaRegistryToken = createToken<RegistryView<Persona>>("personas");
export const ThemeRegistryToken = createToken<RegistryView<Theme>>("themes");
export const CommandRegistryToken = createToken<RegistryView<SlashCommand>>("commands");
export const ProviderRegistryToken = createToken<RegistryView<Provider>>("providers");
export const RouteRegistryToken = createToken<RegistryView<AnyRoute>>("routes");
export const EventBusToken = createToken<EventBus>("event-bus");
export const LoggerToken = createToken<Logger>("logger");

/**
 * The daemon's settings with its secrets: the provider key and the whole config (which holds MCP headers and
 * plugin options). Only plugins holding the `secrets` capability can get it; others use `HostInfoToken`.
 */
export interface DaemonSettings {
  home: string;
  version: string;
  provider: { baseURL?: string; apiKey?: string; model?: string };
  defaultPersona: string;
  defaultCwd: string;
  /** The whole validated global config, for plugins that own a top-level key. */
  raw: Record<string, unknown>;
}
export const SettingsToken = createToken<DaemonSettings>("settings", { capability: "secrets" });

/** Top-level config keys `HostInfo.config` does not give out (they hold secrets or other plugins' options). */
export const SECRET_CONFIG_KEYS: readonly string[] = ["provider", "mcpServers", "pluginOptions", "auth", "token"];

/** What every plugin may know about the daemon: no secrets (current values, read on each access). */
export interface HostInfo {
  readonly home: string;
  readonly version: string;
  readonly provider: { baseURL?: string; model?: string };
  readonly defaultPersona: string;
  readonly defaultCwd: string;
  /** A copy of a top-level config key (e.g. `maxTurnIterations`, `hooks`); undefined for `SECRET_CONFIG_KEYS`. */
  config(key: string): unknown;
}
export const HostInfoToken = createToken<HostInfo>("host-info");

/** A `HostInfo` reading live from the settings, holding no reference a plugin could walk to the secrets. */
export function hostInfoOf(settings: () => DaemonSettings): HostInfo {
  return Object.freeze({
    get home() {
      return settings().home;
    },
    get version() {
      return settings().version;
    },
    get provider() {
      const { baseURL, model } = settings().provider;
      return { ...(baseURL !== undefined ? { baseURL } : {}), ...(model !== undefined ? { model } : {}) };
    },
    get defaultPersona() {
      return settings().defaultPersona;
    },
    get defaultCwd() {
      return settings().defaultCwd;
    },
    config(key: string) {
      if (SECRET_CONFIG_KEYS.includes(key)) return undefined;
      const v = settings().raw[key];
      return v === undefined ? undefined : structuredClone(v);
    },
  });
}
