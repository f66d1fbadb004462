import type { Provider } from "../core/contributions.js";
import type { Logger } from "../core/logger.js";
import type { AppListener } from "./http/server.js";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Right after the daemon listens (server.json written), loads what the first requests and the first turn would
 * otherwise load on their path: the providers' SDKs and clients (the first turn), then the express app, Ajv and the
 * session routes' validators (the first request). Each step starts on a later macrotask, so a request that arrives
 * meanwhile is served between steps (and at worst shares a load already under way); a provider's warm-up is not
 * waited for, so a slow one delays nothing. A failure is logged at debug level only: the same work is done again on
 * first use. Once the daemon is stopping, the remaining steps are skipped.
 */
export async function warmUp(
  app: AppListener,
  providers: Provider[],
  log: Logger,
  stopping: () => boolean,
): Promise<void> {
  const failed = (err: unknown) => log.debug({ err }, "warm-up step failed (done again on first use)");
  for (const p of providers) {
    if (!p.warmUp) continue;
    await tick();
    if (stopping()) return;
    try {
      p.warmUp().catch(failed);
    } catch (err) {
      failed(err);
    }
  }
  await tick();
  if (stopping()) return;
  await app.warm().catch(failed);
}
