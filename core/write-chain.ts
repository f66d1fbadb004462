import { isPromise } from "./event-log-common.js";
import type { Logger } from "./logger.js";
import type { Awaitable } from "./store.js";

/** A store call and what to do when it fails. */
export type Step = [run: () => Awaitable<void>, onError: (err: unknown) => void];

/**
 * The event log's store writes, one after the other: with a synchronous store each runs at once; once one answers
 * with a promise, the next starts after it. The chain never rejects: a failure is logged (or retried once).
 */
export class WriteChain {
  /** The store's writes in flight (asynchronous stores only): the next write starts after them. */
  private writing: Promise<void> | undefined;

  constructor(private readonly log: Logger) {}

  /** Settles once the writes issued so far are done; undefined when none is in flight. */
  get tail(): Promise<void> | undefined {
    return this.writing;
  }

  /**
   * Runs a store write after the ones already in flight, at once when none is (a synchronous store never waits).
   * When it fails, `retry` runs instead (or the failure is logged); the chain itself never rejects.
   */
  enqueue(write: () => Awaitable<void>, retry?: () => Awaitable<void>): void {
    const failed = (err: unknown): Awaitable<void> => {
      if (!retry) {
        this.log.error({ err }, "could not persist events");
        return;
      }
      return runSteps([[retry, (e) => this.log.error({ err: e, cause: err }, "could not persist events")]], 0);
    };
    if (this.writing) {
      this.writing = this.track(this.writing.then(write).then(undefined, failed));
      return;
    }
    let result: Awaitable<void>;
    try {
      result = write();
    } catch (err) {
      result = failed(err);
    }
    if (isPromise(result)) this.writing = this.track(result.then(undefined, failed));
  }

  /** Keeps `p` as the chain's tail until it settles; a later write replaces it. */
  private track(p: Promise<void>): Promise<void> {
    const tail = p.finally(() => {
      if (this.writing === tail) this.writing = undefined;
    });
    return tail;
  }
}

/** Runs the steps in order: synchronously while they answer synchronously, then on their promises. */
export function runSteps(steps: Step[], from: number): Awaitable<void> {
  for (let i = from; i < steps.length; i++) {
    const [run, onError] = steps[i] as Step;
    let result: Awaitable<void>;
    try {
      result = run();
    } catch (err) {
      onError(err);
      continue;
    }
    if (isPromise(result)) {
      return result.then(
        () => runSteps(steps, i + 1),
        (err) => {
          onError(err);
          return runSteps(steps, i + 1);
        },
      );
    }
  }
}
