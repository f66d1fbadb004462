import "reflect-metadata";
import { type DependencyContainer, instanceCachingFactory, container as root } from "tsyringe";
import { type Disposable, toDisposable } from "../core/disposable.js";
import type { Capability } from "../core/plugin.js";
import type { ServiceToken } from "../core/tokens.js";

/** What a withdrawn service resolves to (tsyringe registrations cannot be removed, only superseded). */
const WITHDRAWN = Symbol("agentd:withdrawn");

/**
 * The daemon's services in a tsyringe child container of the process's root container (several daemons can live
 * in one test process), registered by the tokens' symbols. Each plugin gets a child of it (`scope()`) that holds the
 * tokens it declared; that one is disposed when the plugin unloads. A service is withdrawn when its plugin is
 * unloaded: its registration is superseded by a marker and `has` stops naming it.
 */
export class ServiceContainer {
  readonly di: DependencyContainer = root.createChildContainer();
  /** Who provides each service now ("host" for the host's own). */
  private readonly owners = new Map<string, string>();
  /** The token each id was first provided with: its capability is the one that guards it. */
  private readonly tokens = new Map<string, ServiceToken<unknown>>();

  provide<T>(owner: string, token: ServiceToken<T>, value: T): Disposable {
    this.claim(owner, token);
    this.di.register(token.symbol, { useValue: value });
    return toDisposable(() => {
      if (this.owners.get(token.id) !== owner) return;
      this.owners.delete(token.id);
      this.di.register(token.symbol, { useValue: WITHDRAWN });
    });
  }

  /** A host service built on first use (after the plugins it depends on have registered), then kept. */
  provideLazy<T>(token: ServiceToken<T>, factory: () => T): void {
    this.claim("host", token);
    this.di.register(token.symbol, { useFactory: instanceCachingFactory(factory) });
  }

  private claim<T>(owner: string, token: ServiceToken<T>): void {
    const existing = this.owners.get(token.id);
    if (existing) throw new Error(`service "${token.id}" is already provided by "${existing}"`);
    this.owners.set(token.id, owner);
    const known = this.tokens.get(token.id);
    // A provider that goes away and comes back (or a host token) keeps the strictest declared capability.
    if (!known || (!known.capability && token.capability)) this.tokens.set(token.id, token as ServiceToken<unknown>);
  }

  /** A child container for one plugin: it registers the tokens the plugin declared; dispose it at unload. */
  scope(): DependencyContainer {
    return this.di.createChildContainer();
  }

  tryGet<T>(token: ServiceToken<T>): T | undefined {
    if (!this.owners.has(token.id)) return undefined;
    const value = this.di.resolve<T | typeof WITHDRAWN>(token.symbol);
    return value === WITHDRAWN ? undefined : value;
  }

  get<T>(token: ServiceToken<T>): T {
    const v = this.tryGet(token);
    if (v === undefined) throw new Error(`service "${token.id}" is not available`);
    return v;
  }

  /**
   * The capability a plugin needs to get the service registered under `id`: the one on the token it was provided
   * with (not the token a caller passes, which anyone can create with the same id).
   */
  capabilityOf(id: string): Capability | undefined {
    return this.tokens.get(id)?.capability;
  }

  /** Who provides the service `id` now: "host" or a plugin id. */
  ownerOf(id: string): string | undefined {
    return this.owners.get(id);
  }

  /** Ids that are provided or will be on first use. */
  has(id: string): boolean {
    return this.owners.has(id);
  }

  /** At daemon shutdown: instances the container constructed are disposed, and it resolves nothing more. */
  dispose(): Promise<void> | void {
    return this.di.dispose();
  }
}
