import type { DependencyContainer } from "tsyringe";
import type { Capability, ContributionPoint, DepsSpec, ServiceAccess } from "../core/plugin.js";
import type { Registry, RegistryView } from "../core/registry.js";
import type { ServiceToken } from "../core/tokens.js";
import type { ServiceContainer } from "./container.js";
import type { Registries } from "./loader.js";
import { REGISTRY_TOKEN_IDS, registryView } from "./plugin-access.js";

export interface PluginServicesInput {
  id: string;
  services: ServiceContainer;
  /** The plugin's `deps` (undefined: it declared none, and may get any service). */
  declared: DepsSpec | undefined;
  provides: readonly string[];
  registries: Registries;
  /** The plugin's checked contribution points: a registry token's view adds through them. */
  points: { [K in keyof Registries]: ContributionPoint<unknown> };
  /** Throws unless the plugin holds `cap`. */
  needCap(cap: Capability, what: string): void;
}

export interface PluginServices {
  /** The plugin's child container: it holds the tokens the plugin declared. Dispose it when the plugin unloads. */
  di: DependencyContainer;
  /** `ctx.deps`. */
  deps: Record<string, unknown>;
  get: ServiceAccess["get"];
  tryGet: ServiceAccess["tryGet"];
}

/**
 * What one plugin reaches of the daemon's services: a child of the daemon's container holding the tokens it
 * declared, registry tokens as a view whose `add` is the plugin's own contribution point (the same checks, its own
 * id), every other one as the daemon's service, each with the capability checks when it is resolved (a provider may
 * come after the plugin registered). A required dep is resolved once, on first use, and kept: the hot path reads a
 * variable, not the container; an optional one until it is there.
 */
export function pluginServices(input: PluginServicesInput): PluginServices {
  const { services, needCap } = input;
  const di = services.scope();
  const declared = input.declared
    ? new Set([
        ...Object.values(input.declared).map((d) => ("optional" in d ? d.optional.id : d.id)),
        ...input.provides,
      ])
    : undefined;
  const views = new Map<string, RegistryView<unknown>>();
  const viewOf = (token: ServiceToken<unknown>): RegistryView<unknown> | undefined => {
    const key = REGISTRY_TOKEN_IDS[token.id];
    if (!key || !services.has(token.id) || services.capabilityOf(token.id) !== undefined) return undefined;
    let view = views.get(token.id);
    if (!view) {
      view = registryView(input.registries[key] as Registry<unknown>, input.points[key], input.id);
      views.set(token.id, view);
    }
    return view;
  };
  const checked = <T>(token: ServiceToken<T>): T | undefined => {
    const cap = services.capabilityOf(token.id) ?? token.capability;
    if (cap) needCap(cap, `the service "${token.id}"`);
    return (viewOf(token as ServiceToken<unknown>) as T | undefined) ?? services.tryGet(token);
  };
  const hold = (token: ServiceToken<unknown>) => {
    if (!di.isRegistered(token.symbol, false)) di.register(token.symbol, { useFactory: () => checked(token) });
  };
  for (const dep of Object.values(input.declared ?? {})) hold("optional" in dep ? dep.optional : dep);
  const access = <T>(token: ServiceToken<T>, optional: boolean): T | undefined => {
    if (declared && !declared.has(token.id)) {
      throw new Error(`the service "${token.id}" is not declared in the plugin's deps`);
    }
    // A plugin without `deps` (a plain-JS third-party one) gets what it asks for, with the same checks.
    hold(token as ServiceToken<unknown>);
    const value = di.resolve<T | undefined>(token.symbol);
    if (value === undefined && !optional) throw new Error(`service "${token.id}" is not available`);
    return value;
  };
  const deps: Record<string, unknown> = {};
  for (const [key, dep] of Object.entries(input.declared ?? {})) {
    const isOptional = "optional" in dep;
    const token = isOptional ? dep.optional : dep;
    let value: unknown;
    Object.defineProperty(deps, key, {
      enumerable: true,
      get: () => {
        if (value === undefined) value = access(token, isOptional);
        return value;
      },
    });
  }
  return {
    di,
    deps: Object.freeze(deps),
    get: <T>(token: ServiceToken<T>) => access(token, false) as T,
    tryGet: <T>(token: ServiceToken<T>) => access(token, true),
  };
}
