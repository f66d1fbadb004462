import type { Provider } from "../core/contributions.js";
import type { Logger } from "../core/logger.js";
import type { AppListener } from "./http/server.js";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Once the first request has arrived (and, on the store's usual path, been answered), loads what the first turn
 * would otherwise load on its path: the providers' SDKs, clients and HTTP client, then the rest of the HTTP stack
 * (Ajv's first validators: the chat route's among them). Not at listen: a client's first request is what it waits
 * for at start-up, and it would share the CPU with these loads; and a daemon that no client talks to does not hold
 * them (~5 MiB for the provider's SDK, ~7 MiB for express, Ajv and the validators). The first turn follows at least
 * one request (opening its session), so it still finds them loaded, or shares a load under way. Each step starts on
 * a later macrotask, so a request that arrives meanwhile is served between steps; a provider's warm-up is not waited
 * for, so a slow one delays nothing. A failure is logged at debug level only: the same work is done again on first
 * use. Once the daemon is stopping, the remaining steps are skipped.
 */
export async function warmUp(
  app: Pick<AppListener, "warm" | "firstRequest">,
  providers: Provider[],
  log: Logger,
  stopping: () => boolean,
): Promise<void> {
  const failed = (err: unknown) => log.debug({ err }, "warm-up step failed (done again on first use)");
  await app.firstRequest;
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
