import { APIConnectionTimeoutError } from "openai/error";
import { openAIClient } from "./provider.js";
import { classify, isConnectionFailure, safeUrl } from "./retry.js";

/** How a probe went, as cast reports it: `unknown` means reachable and not refused, but `/models` was not usable. */
export type ProbeKind = "ok" | "auth" | "permission" | "unreachable" | "unknown";

export interface VerificationResult {
  ok: boolean;
  probe: ProbeKind;
  /** Model ids served by the endpoint (when it lists them). */
  models?: string[];
  error?: string;
  /** The HTTP status of a failed probe. */
  status?: number;
}

export const VERIFY_TIMEOUT_MS = 10_000;

/**
 * Probes `<url>/models` with a candidate endpoint and key. Nothing is saved; the key only travels in the
 * Authorization header and is never part of the result.
 */
export async function verifyProvider(
  url: string,
  apiKey: string | undefined,
  signal: AbortSignal,
  timeoutMs = VERIFY_TIMEOUT_MS,
): Promise<VerificationResult> {
  try {
    const client = await openAIClient(url, apiKey, timeoutMs);
    const page = await client.models.list({ signal });
    const models = page.data.map((m) => m.id).sort();
    return { ok: true, probe: "ok", models };
  } catch (err) {
    // The HTTP client went away; there is nobody to answer.
    if (signal.aborted) throw err;
    if (err instanceof APIConnectionTimeoutError) {
      return { ok: false, probe: "unreachable", error: `no answer from ${safeUrl(url)} within ${timeoutMs / 1000} s` };
    }
    if (isConnectionFailure(err)) {
      return { ok: false, probe: "unreachable", error: classify(err, apiKey, url).message };
    }
    const failure = classify(err, apiKey, url);
    const status = failure.status;
    if (status === 401) return { ok: false, probe: "auth", error: "API key rejected (401)", status };
    if (status === 403) return { ok: false, probe: "permission", error: failure.message, status };
    // Reachable and the key was not refused: some compatible servers simply do not implement /models.
    const error =
      status === 404 || status === 405
        ? `endpoint does not support /models (${status}); chat may still work`
        : failure.message;
    return { ok: true, probe: "unknown", error, ...(status !== undefined ? { status } : {}) };
  }
}
