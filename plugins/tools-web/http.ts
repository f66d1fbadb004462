import { errorMessage, ToolFailure } from "../../core/index.js";
import { classifyContentType } from "./convert.js";
import { findPrivateAddress } from "./network.js";
import { withTimeout } from "./results.js";

export interface FetchLimits {
  timeoutMs: number;
  /** Bytes of body read at most; the rest is dropped with a note. */
  maxBytes: number;
  maxRedirects: number;
  blockPrivateNetworks: boolean;
}

export interface FetchedPage {
  url: string;
  /** The URLs that redirected, in order (empty when the first answer was final). */
  redirectedFrom: string[];
  status: number;
  contentType: string;
  body: Uint8Array;
  /** The body was longer than `maxBytes` and was cut there. */
  truncated: boolean;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = "agentd/1.0 (web_fetch; +https://github.com/agentd)";

/** Parses the URL the model gave; only http and https are fetched. */
export function parseHttpUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ToolFailure(
      "invalid_arguments",
      `"${raw}" is not a valid URL.`,
      "Pass an absolute URL starting with http:// or https://.",
      false,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ToolFailure(
      "invalid_arguments",
      `web_fetch only fetches http and https URLs, not ${url.protocol.replace(/:$/, "")}.`,
      "Use an http:// or https:// URL; read local files with the read tool.",
      false,
    );
  }
  return url;
}

/**
 * GET with manual redirects (each target re-checked), a deadline covering headers and body, and a body cap.
 * Every failure becomes a ToolFailure with a stable code.
 */
export async function fetchPage(start: URL, limits: FetchLimits, outer: AbortSignal): Promise<FetchedPage> {
  const { signal, timedOut } = withTimeout(outer, limits.timeoutMs);
  const redirectedFrom: string[] = [];
  let url = start;
  try {
    for (;;) {
      if (limits.blockPrivateNetworks) await refusePrivate(url);
      const res = await fetch(url, {
        redirect: "manual",
        signal,
        headers: {
          "user-agent": USER_AGENT,
          accept: "text/html,application/xhtml+xml,text/markdown,text/plain,application/json;q=0.9,*/*;q=0.5",
        },
      });
      if (REDIRECT_STATUSES.has(res.status)) {
        await discard(res);
        redirectedFrom.push(url.href);
        url = redirectTarget(res, url, redirectedFrom.length, limits.maxRedirects);
        continue;
      }
      if (!res.ok) {
        await discard(res);
        throw httpFailure(res.status, res.statusText, url);
      }
      const contentType = res.headers.get("content-type") ?? "";
      // Refused before the body is downloaded: a model cannot read an image or an archive as text.
      if (classifyContentType(contentType) === "binary") {
        await discard(res);
        throw binaryFailure(contentType, url.href);
      }
      const { body, truncated } = await readCapped(res, limits.maxBytes);
      return { url: url.href, redirectedFrom, status: res.status, contentType, body, truncated };
    }
  } catch (err) {
    if (err instanceof ToolFailure) throw err;
    if (outer.aborted) {
      throw new ToolFailure("aborted", "The fetch was aborted.", "Nothing to do; the turn was aborted.", false);
    }
    if (timedOut()) {
      throw new ToolFailure(
        "timeout",
        `${url.host} did not answer completely within ${Math.round(limits.timeoutMs / 100) / 10} s.`,
        "Retry later, or fetch a smaller page.",
        true,
      );
    }
    throw connectionFailure(err, url);
  }
}

async function refusePrivate(url: URL): Promise<void> {
  const address = await findPrivateAddress(url);
  if (address === undefined) return;
  throw new ToolFailure(
    "permission_denied",
    `${url.host} resolves to a private or loopback address (${address}), and private networks are blocked (pluginOptions.tools-web.blockPrivateNetworks).`,
    "Fetch a public URL, or set pluginOptions.tools-web.blockPrivateNetworks to false.",
    false,
  );
}

function redirectTarget(res: Response, from: URL, hops: number, maxRedirects: number): URL {
  const location = res.headers.get("location");
  if (!location) {
    throw new ToolFailure(
      "execution_failed",
      `${from.href} answered ${res.status} without a Location.`,
      "Try another URL.",
      false,
    );
  }
  if (hops > maxRedirects) {
    throw new ToolFailure(
      "execution_failed",
      `Stopped after ${maxRedirects} redirects (last: ${from.href} -> ${location}).`,
      "The site redirects in a loop or too often; fetch the final URL directly.",
      false,
    );
  }
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw new ToolFailure("execution_failed", `${from.href} redirected to an invalid URL.`, "Try another URL.", false);
  }
  if (next.protocol !== "http:" && next.protocol !== "https:") {
    throw new ToolFailure(
      "execution_failed",
      `${from.href} redirected to a ${next.protocol.replace(/:$/, "")} URL, which web_fetch does not follow.`,
      "Only http and https redirects are followed.",
      false,
    );
  }
  return next;
}

export function binaryFailure(contentType: string, url: string): ToolFailure {
  const type = (contentType.split(";")[0] ?? "").trim() || "binary data";
  return new ToolFailure(
    "execution_failed",
    `${url} is ${type}, not text; web_fetch only returns text, HTML and JSON.`,
    "Fetch an HTML or text page instead (for example the page that links to this file).",
    false,
  );
}

function httpFailure(status: number, statusText: string, url: URL): ToolFailure {
  const what = `${url.href} answered HTTP ${status}${statusText ? ` ${statusText}` : ""}.`;
  if (status === 404 || status === 410) {
    return new ToolFailure("not_found", what, "Check the URL, or search for the page with web_search.", false);
  }
  if (status === 408 || status === 429) {
    return new ToolFailure("unavailable", what, "The server is busy or rate limiting; retry later.", true);
  }
  if (status >= 500) return new ToolFailure("unavailable", what, "The server failed; retry later.", true);
  if (status === 401 || status === 403) {
    return new ToolFailure("permission_denied", what, "The page needs authentication; use another source.", false);
  }
  return new ToolFailure("execution_failed", what, "Check the URL.", false);
}

/** Node's fetch reports network errors as `TypeError: fetch failed` with the system error as `cause`. */
function connectionFailure(err: unknown, url: URL): ToolFailure {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : undefined;
  const code = cause && "code" in cause && typeof cause.code === "string" ? cause.code : undefined;
  const why =
    code === "ENOTFOUND" || code === "EAI_AGAIN"
      ? `the name ${url.hostname} could not be resolved`
      : code
        ? `the connection failed (${code})`
        : errorMessage(cause ?? err);
  return new ToolFailure(
    "unavailable",
    `Could not fetch ${url.href}: ${why}.`,
    "Check the host name, or retry later.",
    true,
  );
}

async function discard(res: Response): Promise<void> {
  await res.body?.cancel().catch(() => undefined);
}

async function readCapped(res: Response, maxBytes: number): Promise<{ body: Uint8Array; truncated: boolean }> {
  if (!res.body) return { body: new Uint8Array(0), truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { body: Buffer.concat(chunks, size), truncated: false };
    if (size + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      // Not awaited: cancelling only tells the server we are gone; the caller should not wait for that.
      reader.cancel().catch(() => undefined);
      return { body: Buffer.concat(chunks, maxBytes), truncated: true };
    }
    chunks.push(value);
    size += value.byteLength;
  }
}
