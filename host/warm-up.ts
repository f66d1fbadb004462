import type { Provider } from "../core/contributions.js";
import type { Logger } from "../core/logger.js";
import type { AppListener } from "./http/server.js";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Right after the daemon listens (server.json written), loads what the first requests and the first turn would
 * otherwise load on their path: first the providers' SDKs and clients (the first turn), then the express app and
 * Ajv (the first request). Each step starts on a later macrotask, so a request that arrives meanwhile is served
 * between steps (and at worst shares a load already under way). A failed step is logged at debug level only: the
 * same work is done again on first use.
 */
export async function warmUp(app: AppListener, providers: Provider[], log: Logger): Promise<void> {
  const steps: Array<() => unknown> = [...providers.map((p) => () => p.warmUp?.()), () => app.warm()];
  for (const step of steps) {
    await tick();
    try {
      await step();
    } catch (err) {
      log.debug({ err }, "warm-up step failed (done again on first use)");
    }
  }
}
