import type { Provider } from "../core/contributions.js";
import type { Logger } from "../core/logger.js";
import type { AppListener } from "./http/server.js";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Right after the daemon listens (server.json written), loads what the first turn would otherwise load on its path
 * and no request loads before it: the providers' SDKs, clients and HTTP client. Once the first request has arrived
 * (and built the express app), the rest of the HTTP stack follows: Ajv and the first routes' validators (the chat
 * route's among them). Not at listen: express, Ajv and the validators are ~7 MiB that an idle daemon with no client
 * does not need, while the first turn follows at least one request (opening its session). Each step starts on a
 * later macrotask, so a request that arrives meanwhile is served between steps (and at worst shares a load already
 * under way); a provider's warm-up is not waited for, so a slow one delays nothing. A failure is logged at debug
 * level only: the same work is done again on first use. Once the daemon is stopping, the remaining steps are
 * skipped.
 */
export async function warmUp(
  app: Pick<AppListener, "warm" | "firstRequest">,
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
  await app.firstRequest;
  await tick();
  if (stopping()) return;
  await app.warm().catch(failed);
}
