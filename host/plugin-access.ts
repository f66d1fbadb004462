import type { Capability, ContributionPoint } from "../core/plugin.js";
import type { Registry, RegistryView } from "../core/registry.js";
import type { Registries } from "./loader.js";

/** Capability names of earlier versions, for a helpful message. */
export const RENAMED_CAPABILITIES: Record<string, Capability> = {
  "routes.public": "public-routes",
  "secrets.read": "secrets",
  "shell.exec": "process",
  "net.fetch": "network",
  "fs.read": "filesystem",
  "fs.write": "filesystem",
};

/** Host registry token ids and the registry each names. */
export const REGISTRY_TOKEN_IDS: Record<string, keyof Registries> = {
  tools: "tools",
  personas: "personas",
  themes: "themes",
  commands: "commands",
  providers: "providers",
  routes: "routes",
};

/** Reads of the registry; `add` only under the plugin's own id, through its checked contribution point. */
export function registryView<T>(reg: Registry<T>, point: ContributionPoint<T>, owner: string): RegistryView<T> {
  return Object.freeze({
    kind: reg.kind,
    add(by: string, item: T) {
      if (by !== owner) throw new Error(`plugin "${owner}" can add ${reg.kind}s only under its own id`);
      return point.add(item);
    },
    get: (key: string) => reg.get(key),
    has: (key: string) => reg.has(key),
    ownerOf: (key: string) => reg.ownerOf(key),
    list: () => reg.list(),
    entries: () => reg.entries(),
    countBy: (o: string) => reg.countBy(o),
    onChange: (fn: () => void) => reg.onChange(fn),
  });
}
