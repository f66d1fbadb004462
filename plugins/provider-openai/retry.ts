import { APIConnectionError, APIError, APIUserAbortError } from "openai/error";

/** Backoff for transient provider failures. Injectable so tests run in milliseconds. */
export interface BackoffOptions {
  /** First delay (default 500 ms). */
  baseMs: number;
  /** Growth per attempt (default 2). */
  factor: number;
  /** Upper bound of any single wait, including a server's Retry-After (default 30 s). */
  capMs: number;
  /** Attempts in total, the first one included (default 5). */
  maxAttempts: number;
  /** [0, 1) source for jitter; injectable for deterministic tests. */
  random: () => number;
}

export const DEFAULT_BACKOFF: BackoffOptions = {
  baseMs: 500,
  factor: 2,
  capMs: 30_000,
  maxAttempts: 5,
  random: Math.random,
};

/**
 * Delay before retry number `retry` (1-based). A server's Retry-After wins (capped) because it knows its own
 * load; otherwise exponential with "equal jitter" (half fixed, half random) so concurrent sessions spread out
 * without ever retrying immediately.
 */
export function backoffDelay(retry: number, opts: BackoffOptions, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.min(Math.max(0, retryAfterMs), opts.capMs);
  const exp = Math.min(opts.capMs, opts.baseMs * opts.factor ** (retry - 1));
  return Math.round(exp / 2 + opts.random() * (exp / 2));
}

/** `retry-after-ms` (OpenAI's precise header), else `Retry-After` in seconds or as an HTTP date. */
export function parseRetryAfter(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number.parseFloat(headers.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers.get("retry-after");
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** An error from the provider, with a message safe to show and log (never the API key). */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly retryable = false,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "ProviderError";
  }
}

export function isAbort(err: unknown): boolean {
  return err instanceof APIUserAbortError || (err instanceof Error && err.name === "AbortError");
}

/** True for failures of the connection itself (refused, reset, timeout, body cut short), as opposed to an answer. */
export function isConnectionFailure(err: unknown): boolean {
  if (err instanceof APIConnectionError) return true;
  if (err instanceof APIError) return false;
  if (!(err instanceof Error)) return false;
  // undici reports a body cut mid-way as `TypeError: terminated` (cause: the socket error); raw socket errors
  // carry a system code. A plain TypeError without either is a bug, not a network failure.
  if (err instanceof TypeError) return err.cause !== undefined || /^(terminated|fetch failed)$/.test(err.message);
  return /^(E[A-Z]+|UND_ERR_\w+)$/.test(String((err as { code?: unknown }).code));
}

/**
 * Turns anything the SDK throws into a ProviderError with a clear message. The provider's own message is kept
 * for requests it rejected (useful: "model not found") after removing the key; for 401 it is dropped entirely
 * because providers echo (part of) the key there.
 */
export function classify(err: unknown, apiKey: string | undefined, baseURL: string): ProviderError {
  if (err instanceof ProviderError) return err;
  if (isConnectionFailure(err)) {
    const detail = redact(connectionDetail(err), apiKey);
    return new ProviderError(`cannot connect to the provider at ${safeUrl(baseURL)}: ${detail}`, undefined, true);
  }
  if (err instanceof APIError) {
    const status = err.status;
    const said = redact(providerMessage(err), apiKey);
    const suffix = said ? `: ${said}` : "";
    if (status === undefined) {
      // An error event inside a 200 stream; retry only what the provider itself marks as load or outage.
      const code = Number((err.error as { code?: unknown } | undefined)?.code);
      return new ProviderError(
        `provider reported an error mid-stream${suffix}`,
        undefined,
        code === 429 || code >= 500,
      );
    }
    if (status === 401) return new ProviderError("provider rejected the API key (401)", 401);
    if (status === 403) return new ProviderError(`provider denied access (403)${suffix}`, 403);
    if (status === 404) return new ProviderError(`provider endpoint or model not found (404)${suffix}`, 404);
    if (status === 429) {
      // Exhausted quota or billing does not recover by waiting.
      if (err.code === "insufficient_quota" || /quota|billing/i.test(said)) {
        return new ProviderError(`provider quota exhausted (429)${suffix}`, 429);
      }
      return new ProviderError(`provider rate limit (429)${suffix}`, 429, true, parseRetryAfter(err.headers));
    }
    if (status === 408 || status === 409 || status >= 500) {
      return new ProviderError(`provider error (${status})${suffix}`, status, true, parseRetryAfter(err.headers));
    }
    return new ProviderError(`provider rejected the request (${status})${suffix}`, status);
  }
  return new ProviderError(`provider call failed: ${redact(err instanceof Error ? err.message : String(err), apiKey)}`);
}

function providerMessage(err: APIError): string {
  const body = err.error as { message?: unknown } | undefined;
  return typeof body?.message === "string" ? body.message.slice(0, 500) : "";
}

function connectionDetail(err: unknown): string {
  let e: unknown = err;
  // The SDK wraps the socket error; the innermost cause says what actually happened (ECONNREFUSED, ...).
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  if (!(e instanceof Error)) return String(e);
  const code = (e as { code?: unknown }).code;
  return typeof code === "string" && !e.message.includes(code) ? `${e.message} (${code})` : e.message;
}

/** Removes the key and anything shaped like one (providers sometimes echo a masked key). */
export function redact(text: string, apiKey: string | undefined): string {
  let out = apiKey && apiKey.length >= 4 ? text.split(apiKey).join("***") : text;
  out = out.replace(/\b(sk|pk|key)-[\w*.-]{4,}/gi, "***");
  return out;
}

/** The URL without credentials or query, for messages. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`.replace(/\/$/, "");
  } catch {
    return "(invalid URL)";
  }
}

/** Waits `ms`, rejecting with the abort reason as soon as `signal` aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortReason(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

export function abortReason(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  if (r instanceof Error) return r;
  const e = new Error(typeof r === "string" ? r : "the provider call was aborted");
  e.name = "AbortError";
  return e;
}
