import { type Disposable, toDisposable } from "./disposable.js";

export interface Owned<T> {
  readonly owner: string;
  readonly item: T;
}

/**
 * A registry as plugins see it through a registry token: reads, and `add` under the plugin's own id with the same
 * checks as the plugin's contribution point (the host hands each plugin a view, never the registry itself).
 */
export interface RegistryView<T> {
  readonly kind: string;
  add(owner: string, item: T): Disposable;
  get(key: string): T | undefined;
  has(key: string): boolean;
  ownerOf(key: string): string | undefined;
  list(): T[];
  entries(): Owned<T>[];
  countBy(owner: string): number;
  onChange(fn: () => void): Disposable;
}

/**
 * A contribution point: items keyed by a unique name, each remembering the plugin that added it.
 * Adding a key twice is refused (collisions are a plugin bug the host reports, not a silent override).
 */
export class Registry<T> implements RegistryView<T> {
  private readonly items = new Map<string, Owned<T>>();
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly kind: string,
    private readonly keyOf: (item: T) => string,
  ) {}

  add(owner: string, item: T): Disposable {
    const key = this.keyOf(item);
    const existing = this.items.get(key);
    if (existing) {
      throw new Error(`${this.kind} "${key}" is already contributed by plugin "${existing.owner}"`);
    }
    const entry: Owned<T> = Object.freeze({ owner, item });
    this.items.set(key, entry);
    this.changed();
    return toDisposable(() => {
      if (this.items.get(key) === entry) {
        this.items.delete(key);
        this.changed();
      }
    });
  }

  get(key: string): T | undefined {
    return this.items.get(key)?.item;
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  ownerOf(key: string): string | undefined {
    return this.items.get(key)?.owner;
  }

  list(): T[] {
    return [...this.items.values()].map((e) => e.item);
  }

  entries(): Owned<T>[] {
    return [...this.items.values()];
  }

  countBy(owner: string): number {
    let n = 0;
    for (const e of this.items.values()) if (e.owner === owner) n++;
    return n;
  }

  /** Called after every change; lets the host rebuild derived state (e.g. the router) lazily. */
  onChange(fn: () => void): Disposable {
    this.listeners.add(fn);
    return toDisposable(() => this.listeners.delete(fn));
  }

  private changed() {
    for (const fn of this.listeners) fn();
  }
}
