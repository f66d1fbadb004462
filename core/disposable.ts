/** Something that can be undone: every contribution a plugin makes returns one. */
export interface Disposable {
  dispose(): void;
}

export function toDisposable(fn: () => void): Disposable {
  let done = false;
  return {
    dispose() {
      if (done) return;
      done = true;
      fn();
    },
  };
}

/** Collects disposables and runs them in reverse order; errors in one do not stop the others. */
export class DisposableStore implements Disposable {
  private items: Disposable[] = [];
  private disposed = false;

  add<T extends Disposable>(item: T): T {
    if (this.disposed) {
      item.dispose();
      return item;
    }
    this.items.push(item);
    return item;
  }

  get size(): number {
    return this.items.length;
  }

  dispose(): Error[] {
    this.disposed = true;
    const errors: Error[] = [];
    for (const item of this.items.reverse()) {
      try {
        item.dispose();
      } catch (err) {
        errors.push(err instanceof Error ? err : new Error(String(err)));
      }
    }
    this.items = [];
    return errors;
  }
}
