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

/** Where a layered setting's effective value comes from: built-in default < config file < settings.json < env. */
export type SettingSource = "default" | "config" | "settings" | "env";

export type PermissionMode = "default" | "bypass";

/** What `<home>/settings.json` may hold (the daemon owns and writes it; clients change it through the API). */
export interface UserSettings {
  provider?: { baseURL?: string; apiKey?: string; model?: string };
  defaultPersona?: string;
  maxTurnIterations?: number;
  permissionMode?: PermissionMode;
  theme?: string;
  reasoning?: string;
}

/** A change to settings.json: `null` removes a key (the lower layers apply again). */
export interface UserSettingsPatch {
  provider?: { baseURL?: string | null; apiKey?: string | null; model?: string | null };
  defaultPersona?: string | null;
  maxTurnIterations?: number | null;
  permissionMode?: PermissionMode | null;
  theme?: string | null;
  reasoning?: string | null;
}

/** The layered keys, as GET /config names them. */
export const LAYERED_KEYS = [
  "provider.baseURL",
  "provider.apiKey",
  "provider.model",
  "defaultPersona",
  "maxTurnIterations",
  "permissionMode",
  "theme",
  "reasoning",
] as const;
export type LayeredKey = (typeof LAYERED_KEYS)[number];

/**
 * The daemon's settings with its secrets: the provider key and the whole config (which holds MCP headers and
 * plugin options), and `update` to change them. Only plugins holding the `secrets` capability can get it; others
 * read `HostInfoToken`. The layered values are live: a change through `update` applies at once, without a restart.
 */
export interface DaemonSettings {
  home: string;
  version: string;
  /** The effective provider connection (read it on every use). */
  readonly provider: { baseURL?: string; apiKey?: string; model?: string };
  readonly defaultPersona: string;
  defaultCwd: string;
  /** Default per-turn model-call cap (10..10000). */
  readonly maxTurnIterations: number;
  /** Permission mode of new sessions. */
  readonly permissionMode: PermissionMode;
  /** Chosen theme id, when one was chosen. */
  readonly theme: string | undefined;
  /** Reasoning level of new sessions, when one was chosen. */
  readonly reasoning: string | undefined;
  /** The whole validated global config, for plugins that own a top-level key. */
  raw: Record<string, unknown>;
  /** Each layered key with its source; `value` is left out for the API key. */
  layers(): Record<LayeredKey, { value?: unknown; source: SettingSource }>;
  /** Layered keys whose settings.json value an environment variable overrides (e.g. "provider.baseURL"). */
  envOverrides(): LayeredKey[];
  /** Persists a change (validated, one at a time; `<home>/settings.json`, 0600, or the shared database) and applies it. */
  update(patch: UserSettingsPatch): Promise<void>;
}
export const SettingsToken = createToken<DaemonSettings>("settings", { capability: "secrets" });

/** Top-level config keys `HostInfo.config` does not give out (they hold secrets or other plugins' options). */
export const SECRET_CONFIG_KEYS: readonly string[] = [
  "provider",
  "mcpServers",
  "pluginOptions",
  "auth",
  "token",
  "database",
];

/** What every plugin may know about the daemon: no secrets (current values, read on each access). */
export interface HostInfo {
  readonly home: string;
  readonly version: string;
  readonly provider: { baseURL?: string; model?: string };
  readonly defaultPersona: string;
  readonly defaultCwd: string;
  readonly maxTurnIterations: number;
  readonly permissionMode: PermissionMode;
  readonly theme: string | undefined;
  readonly reasoning: string | undefined;
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
    get maxTurnIterations() {
      return settings().maxTurnIterations;
    },
    get permissionMode() {
      return settings().permissionMode;
    },
    get theme() {
      return settings().theme;
    },
    get reasoning() {
      return settings().reasoning;
    },
    config(key: string) {
      if (SECRET_CONFIG_KEYS.includes(key)) return undefined;
      const v = settings().raw[key];
      return v === undefined ? undefined : structuredClone(v);
    },
  });
}
