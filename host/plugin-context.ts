import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Disposable, toDisposable } from "../core/disposable.js";
import { DocumentStoreToken, pluginDocuments } from "../core/documents.js";
import type { Capability, ContributionPoint, PluginContext } from "../core/plugin.js";
import type { Registry } from "../core/registry.js";
import type { AnyRoute } from "../core/routes.js";
import { SessionStoreToken } from "../core/store.js";
import type { Entry, PluginHostDeps, Registries } from "./loader.js";
import type { PluginOptionsValidator } from "./plugin-options.js";
import { pluginServices } from "./plugin-services.js";

/**
 * The context a plugin's `register`/`start`/`stop` get: its validated options, its contribution points (each item
 * checked against its capabilities and frozen), its services (exactly what it declared, through its own child
 * container), its data directory and its log. Everything it adds goes into its scope, disposed when it unloads.
 */
export function pluginContext(
  entry: Entry,
  deps: PluginHostDeps,
  optionsValidator: PluginOptionsValidator,
): PluginContext {
  const m = entry.manifest;
  const id = m.id;
  const scope = entry.scope;
  const log = deps.log.child({ plugin: id });
  const thirdParty = entry.source.origin !== "builtin";
  const options = optionsValidator.validate(m, deps.options[id] ?? {}, !thirdParty);
  const needCap = (cap: Capability, what: string) => {
    if (entry.held.has(cap)) return;
    if (entry.denied.includes(cap)) {
      throw new Error(
        `${what} needs the capability "${cap}", which the config does not allow: add it to pluginCapabilities.${id}`,
      );
    }
    throw new Error(`${what} needs the capability "${cap}" in the manifest's "capabilities"`);
  };
  // Contributions are frozen once added: the registries are shared, and a plugin must not be able to change
  // another's route (say, make it public) or tool (say, swap its execute) through what it reads back.
  const point = <T>(reg: Registry<T>, check?: (item: T) => T): ContributionPoint<T> => ({
    add: (item) => scope.add(reg.add(id, Object.freeze(check ? check(item) : item))),
  });
  const checkRoute = (route: AnyRoute): AnyRoute => {
    needCap("routes", `route ${route.method} ${route.path}`);
    if (route.auth === "public") needCap("public-routes", `public route ${route.path}`);
    if (route.page) needCap("pages", `page ${route.path}`);
    if (!thirdParty) return route;
    const path = `/plugins/${id}${route.path.startsWith("/") ? "" : "/"}${route.path}`;
    return { ...route, path, operationId: `${camel(id)}_${route.operationId}`, tags: route.tags ?? [`plugin:${id}`] };
  };
  const r = deps.registries;
  // A project plugin's tools, commands and personas are tagged with its project: other sessions do not see them.
  const scoped = <T>(item: T): T => (deps.projectRoot ? { ...item, projectRoot: deps.projectRoot } : item);
  const points = {
    routes: point(r.routes, checkRoute),
    tools: point(r.tools, scoped),
    personas: point(r.personas, scoped),
    themes: point(r.themes),
    commands: point(r.commands, scoped),
    providers: point(r.providers, (p) => {
      needCap("provider", `provider ${p.id}`);
      return p;
    }),
  };
  const services = pluginServices({
    id,
    services: deps.services,
    declared: entry.plugin?.deps,
    provides: m.provides ?? [],
    registries: r,
    points: points as { [K in keyof Registries]: ContributionPoint<unknown> },
    needCap,
  });
  entry.di = services.di;
  let dataDir: string | undefined;
  return {
    id,
    manifest: m,
    log,
    options,
    deps: services.deps,
    home: deps.home,
    documents() {
      needCap("storage", "ctx.documents()");
      return pluginDocuments(() => deps.services.get(DocumentStoreToken), id);
    },
    dataDir() {
      needCap("storage", "ctx.dataDir()");
      // Created on first use, once: plugins call this on hot paths (a checkpoint's state at every turn's start).
      if (dataDir === undefined) {
        const dir = join(deps.home, "plugins-data", id);
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        dataDir = dir;
      }
      return dataDir;
    },
    ...points,
    services: {
      provide(token, value) {
        if (!(m.provides ?? []).includes(token.id)) {
          throw new Error(`service "${token.id}" is not declared in the manifest's "provides"`);
        }
        if (token.id === SessionStoreToken.id) needCap("storage", "providing the session store");
        return scope.add(deps.services.provide(id, token, value));
      },
      provideClass(token, cls) {
        const construct = cls as unknown as new (...args: unknown[]) => typeof cls.prototype;
        return this.provide(token, services.di.resolve(construct));
      },
      get: services.get,
      tryGet: services.tryGet,
    },
    events: { on: (type, handler) => scope.add(deps.bus.on(type, handler)) },
    onDispose(d: Disposable | (() => void)) {
      scope.add(typeof d === "function" ? toDisposable(d) : d);
    },
  };
}

function camel(id: string): string {
  return id.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}
