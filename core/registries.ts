import type { Persona, Provider, SlashCommand, Theme, ToolDefinition } from "./contributions.js";
import type { EventBus } from "./events.js";
import type { Logger } from "./logger.js";
import type { Registry } from "./registry.js";
import type { AnyRoute } from "./routes.js";
import { createToken } from "./tokens.js";

/** The host-owned contribution registries, readable by plugins that consume contributions (e.g. the agent loop). */
export const ToolRegistryToken = createToken<Registry<ToolDefinition>>("tools");
export const PersonaRegistryToken = createToken<Registry<Persona>>("personas");
export const ThemeRegistryToken = createToken<Registry<Theme>>("themes");
export const CommandRegistryToken = createToken<Registry<SlashCommand>>("commands");
export const ProviderRegistryToken = createToken<Registry<Provider>>("providers");
export const RouteRegistryToken = createToken<Registry<AnyRoute>>("routes");
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
 * The daemon's settings that plugins may read (never secrets other than what a provider plugin needs). The
 * layered values are live: a change through `update` applies at once, without a restart.
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
  /** Persists a change to `<home>/settings.json` (validated, atomic, 0600, one write at a time) and applies it. */
  update(patch: UserSettingsPatch): void;
}
export const SettingsToken = createToken<DaemonSettings>("settings");
