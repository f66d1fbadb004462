/**
 * Work the store does on a timer between its writes (the index merges, the WAL checkpoint): one step scheduled at a
 * time, a promise for "nothing due", and a stop. The timer does not keep the process alive: nothing is lost by
 * exiting first, since the next write or open starts the work again.
 */
export class TimedWork {
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly waiting: Array<() => void> = [];

  /** `step` runs on the timer and ends with `again` (more to do) or `done`. */
  constructor(private readonly step: () => void) {}

  /** A step in `ms`, unless one is scheduled already (or the work was closed). */
  start(ms: number): void {
    if (!this.timer && !this.closed) this.again(ms);
  }

  /** From a step: the next one, in `ms`. */
  again(ms: number): void {
    this.timer = setTimeout(this.step, ms);
    this.timer.unref();
  }

  /** From a step: nothing is left to do. */
  done(): void {
    this.timer = undefined;
    for (const resolve of this.waiting.splice(0)) resolve();
  }

  /** Resolves once no step is scheduled (or the work was closed). */
  idle(): Promise<void> {
    if (!this.timer) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.done();
  }
}
