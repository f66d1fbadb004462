import "reflect-metadata";
import { type DependencyContainer, container as rootContainer } from "tsyringe";
import { type Disposable, toDisposable } from "../core/disposable.js";
import type { ServiceToken } from "../core/tokens.js";

/**
 * The daemon's DI container: a tsyringe child container per daemon (several daemons can live in one test
 * process). Services are registered by symbol token through factories that read a map, so a service can be
 * withdrawn when its plugin is unloaded, and classes constructed by tsyringe (`@inject(token.symbol)`) see it.
 */
export class ServiceContainer {
  readonly di: DependencyContainer = rootContainer.createChildContainer();
  private readonly values = new Map<string, { owner: string; value: unknown }>();
  private readonly lazy = new Map<string, () => unknown>();

  provide<T>(owner: string, token: ServiceToken<T>, value: T): Disposable {
    const existing = this.values.get(token.id);
    if (existing) throw new Error(`service "${token.id}" is already provided by "${existing.owner}"`);
    const entry = { owner, value };
    this.values.set(token.id, entry);
    if (!this.di.isRegistered(token.symbol)) {
      this.di.register(token.symbol, { useFactory: () => this.get(token) });
    }
    return toDisposable(() => {
      if (this.values.get(token.id) === entry) this.values.delete(token.id);
    });
  }

  /** A host service built on first use (after the plugins it depends on have registered). */
  provideLazy<T>(token: ServiceToken<T>, factory: () => T): void {
    this.lazy.set(token.id, factory);
    if (!this.di.isRegistered(token.symbol)) {
      this.di.register(token.symbol, { useFactory: () => this.get(token) });
    }
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

  /** Ids that are provided or will be on first use. */
  has(id: string): boolean {
    return this.values.has(id) || this.lazy.has(id);
  }
}
