import type {
  AnyRoute,
  DaemonSettings,
  EventBus,
  Logger,
  Persona,
  Provider,
  SlashCommand,
  Theme,
  ToolDefinition,
} from "../core/index.js";
import {
  CommandRegistryToken,
  EventBusToken,
  HostInfoToken,
  hostInfoOf,
  LoggerToken,
  PersonaRegistryToken,
  ProviderRegistryToken,
  RouteRegistryToken,
  SettingsToken,
  ThemeRegistryToken,
  ToolRegistryToken,
} from "../core/registries.js";
import { Registry } from "../core/registry.js";
import type { ServiceContainer } from "./container.js";
import type { Registries } from "./loader.js";

/** The host's contribution registries, empty. */
export function createRegistries(): Registries {
  return {
    routes: new Registry<AnyRoute>("route", (r) => `${r.method} ${r.path}`),
    tools: new Registry<ToolDefinition>("tool", (t) => t.name),
    personas: new Registry<Persona>("persona", (p) => p.name),
    themes: new Registry<Theme>("theme", (t) => t.id),
    commands: new Registry<SlashCommand>("command", (c) => c.name),
    providers: new Registry<Provider>("provider", (p) => p.id),
  };
}

/** Provides what the host itself owns (logger, bus, settings, host info, the registries) to the plugins. */
export function provideHostServices(
  services: ServiceContainer,
  host: { log: Logger; bus: EventBus; settings: DaemonSettings; registries: Registries },
): void {
  const { log, bus, settings, registries } = host;
  services.provide("host", LoggerToken, log);
  services.provide("host", EventBusToken, bus);
  services.provide("host", SettingsToken, settings);
  services.provide(
    "host",
    HostInfoToken,
    hostInfoOf(() => settings),
  );
  services.provide("host", ToolRegistryToken, registries.tools);
  services.provide("host", PersonaRegistryToken, registries.personas);
  services.provide("host", ThemeRegistryToken, registries.themes);
  services.provide("host", CommandRegistryToken, registries.commands);
  services.provide("host", ProviderRegistryToken, registries.providers);
  services.provide("host", RouteRegistryToken, registries.routes);
}
