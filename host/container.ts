import "reflect-metadata";
import type { DependencyContainer } from "tsyringe";
import { type Disposable, toDisposable } from "../core/disposable.js";
import type { Capability } from "../core/plugin.js";
import type { ServiceToken } from "../core/tokens.js";
import { lazyRequire } from "./lazy.js";

/**
 * The daemon's DI container: a tsyringe child container per daemon (several daemons can live in one test
 * process). Services are registered by symbol token through factories that read a map, so a service can be
 * withdrawn when its plugin is unloaded, and classes constructed by tsyringe (`@inject(token.symbol)`) see it.
 */
export class ServiceContainer {
  private container: DependencyContainer | undefined;
  /** Every token ever provided: registered with tsyringe when the container is first needed. */
  private readonly tokens = new Map<string, ServiceToken<unknown>>();
  private readonly values = new Map<string, { owner: string; value: unknown }>();
  private readonly lazy = new Map<string, () => unknown>();

  provide<T>(owner: string, token: ServiceToken<T>, value: T): Disposable {
    const existing = this.values.get(token.id);
    if (existing) throw new Error(`service "${token.id}" is already provided by "${existing.owner}"`);
    if (this.lazy.has(token.id)) throw new Error(`service "${token.id}" is already provided by "host"`);
    const entry = { owner, value };
    this.values.set(token.id, entry);
    this.registerToken(token);
    return toDisposable(() => {
      if (this.values.get(token.id) === entry) this.values.delete(token.id);
    });
  }

  /** A host service built on first use (after the plugins it depends on have registered). */
  provideLazy<T>(token: ServiceToken<T>, factory: () => T): void {
    this.lazy.set(token.id, factory);
    this.registerToken(token);
  }

  /**
   * The tsyringe child container, created on first use: tsyringe costs ~40 ms to load and only classes built
   * with `provideClass` need it.
   */
  get di(): DependencyContainer {
    if (!this.container) {
      const { container: root } = lazyRequire<typeof import("tsyringe")>("tsyringe");
      this.container = root.createChildContainer();
      for (const token of this.tokens.values()) this.registerWith(this.container, token);
    }
    return this.container;
  }

  private registerToken<T>(token: ServiceToken<T>): void {
    const known = this.tokens.get(token.id);
    // A provider that goes away and comes back (or a host token) keeps the strictest declared capability.
    if (!known || (!known.capability && token.capability)) this.tokens.set(token.id, token as ServiceToken<unknown>);
    if (this.container) this.registerWith(this.container, token);
  }

  private registerWith<T>(di: DependencyContainer, token: ServiceToken<T>): void {
    if (!di.isRegistered(token.symbol)) di.register(token.symbol, { useFactory: () => this.get(token) });
  }

  construct<T>(cls: new (...args: never[]) => T): T {
    return this.di.resolve(cls as unknown as new (...args: unknown[]) => T);
  }

  tryGet<T>(token: ServiceToken<T>): T | undefined {
    const hit = this.values.get(token.id);
    if (hit) return hit.value as T;
    const factory = this.lazy.get(token.id);
    if (!factory) return undefined;
    const value = factory() as T;
    this.lazy.delete(token.id);
    this.values.set(token.id, { owner: "host", value });
    return value;
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

  /** Ids that are provided or will be on first use. */
  has(id: string): boolean {
    return this.values.has(id) || this.lazy.has(id);
  }
}
