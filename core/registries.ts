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

/** The daemon's settings that plugins may read (never secrets other than what a provider plugin needs). */
export interface DaemonSettings {
  home: string;
  version: string;
  provider: { baseURL?: string; apiKey?: string; model?: string };
  defaultPersona: string;
  defaultCwd: string;
  /** The whole validated global config, for plugins that own a top-level key. */
  raw: Record<string, unknown>;
}
export const SettingsToken = createToken<DaemonSettings>("settings");
