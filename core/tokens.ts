import type { Capability } from "./plugin.js";

/**
 * Typed service references. A token names an interface; plugins provide and require services by token,
 * never by importing each other. The id doubles as the name used in manifests' `provides` / `requires`.
 */
export interface ServiceToken<T> {
  readonly id: string;
  /** The capability a plugin must hold to `get` this service (e.g. `secrets` for services that reach secrets). */
  readonly capability?: Capability;
  readonly symbol: symbol;
  /** Phantom field carrying the service type; never set. */
  readonly __type?: T;
}

export function createToken<T>(id: string, opts: { capability?: Capability } = {}): ServiceToken<T> {
  return { id, symbol: Symbol.for(`agentd:${id}`), ...(opts.capability ? { capability: opts.capability } : {}) };
}
