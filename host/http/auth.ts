import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

export const COOKIE_NAME = "agentd_session";
const COOKIE_MAX_AGE_S = 7 * 24 * 3600;

export function isLoopbackAddress(addr: string | undefined): boolean {
  if (!addr) return false;
  if (addr === "::1") return true;
  const v4 = addr.startsWith("::ffff:") ? addr.slice(7) : addr;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** Constant-time comparison that does not leak the length either (both sides are hashed first). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a).digest();
  const hb = createHash("sha256").update(b).digest();
  return timingSafeEqual(ha, hb);
}

/**
 * Bearer token (loopback peers only) or a signed login cookie. The cookie is `<expiry>.<nonce>.<mac>`, signed
 * with a key derived from the token, so it survives restarts and every cookie dies when the token is rotated.
 */
export class Authenticator {
  private token: string;
  private cookieKey: Buffer;
  private readonly failures = new Map<string, number[]>();
  /** Nonces of redeemed sign-in codes, until they expire anyway. */
  private readonly usedCodes = new Map<string, number>();

  constructor(token: string) {
    this.token = token;
    this.cookieKey = deriveKey(token);
  }

  setToken(token: string): void {
    this.token = token;
    this.cookieKey = deriveKey(token);
  }

  authenticate(req: IncomingMessage): "bearer" | "cookie" | null {
    const header = req.headers.authorization;
    if (header && /^Bearer\s+/i.test(header)) {
      const candidate = header.replace(/^Bearer\s+/i, "").trim();
      if (isLoopbackAddress(req.socket.remoteAddress) && safeEqual(candidate, this.token)) return "bearer";
    }
    const cookie = readCookie(req.headers.cookie, COOKIE_NAME);
    if (cookie && this.verifyCookie(cookie)) return "cookie";
    return null;
  }

  /** The `?token=` of an event-stream request: loopback peers only, compared in constant time. */
  authenticateQuery(req: IncomingMessage, candidate: unknown): "bearer" | null {
    if (typeof candidate !== "string" || candidate === "") return null;
    return isLoopbackAddress(req.socket.remoteAddress) && safeEqual(candidate, this.token) ? "bearer" : null;
  }

  checkToken(candidate: string): boolean {
    return safeEqual(candidate, this.token);
  }

  issueCookie(secure: boolean): string {
    const exp = Math.floor(Date.now() / 1000) + COOKIE_MAX_AGE_S;
    const body = `${exp}.${randomBytes(16).toString("base64url")}`;
    const value = `${body}.${this.mac(body)}`;
    return `${COOKIE_NAME}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${COOKIE_MAX_AGE_S}${secure ? "; Secure" : ""}`;
  }

  clearCookie(): string {
    return `${COOKIE_NAME}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
  }

  /** Login throttling: 5 failures per address per 15 minutes. Returns seconds to wait, or 0. */
  retryAfter(addr: string): number {
    const now = Date.now();
    const recent = (this.failures.get(addr) ?? []).filter((t) => now - t < 15 * 60_000);
    this.failures.set(addr, recent);
    if (recent.length < 5) return 0;
    return Math.ceil((15 * 60_000 - (now - (recent[0] ?? now))) / 1000);
  }

  recordFailure(addr: string): void {
    const list = this.failures.get(addr) ?? [];
    list.push(Date.now());
    this.failures.set(addr, list);
  }

  /** Exchanges a one-time sign-in code (see mintLoginCode) for a cookie: valid once, before it expires. */
  redeemLoginCode(code: string): boolean {
    const parts = code.split(".");
    if (parts.length !== 3) return false;
    const [exp, nonce, mac] = parts as [string, string, string];
    const now = Date.now();
    if (!/^\d+$/.test(exp) || Number(exp) * 1000 < now || Number(exp) * 1000 > now + LOGIN_CODE_MAX_TTL_MS) {
      return false;
    }
    if (!safeEqual(mac, loginCodeMac(this.cookieKey, exp, nonce))) return false;
    for (const [n, e] of this.usedCodes) if (e * 1000 < now) this.usedCodes.delete(n);
    if (this.usedCodes.has(nonce)) return false;
    this.usedCodes.set(nonce, Number(exp));
    return true;
  }

  private verifyCookie(value: string): boolean {
    const parts = value.split(".");
    if (parts.length !== 3) return false;
    const [exp, nonce, mac] = parts as [string, string, string];
    if (!/^\d+$/.test(exp) || Number(exp) * 1000 < Date.now()) return false;
    return safeEqual(mac, this.mac(`${exp}.${nonce}`));
  }

  private mac(body: string): string {
    return createHmac("sha256", this.cookieKey).update(body).digest("base64url");
  }
}

/** Sign-in links live this long: long enough to click, short enough that a copied link is soon worthless. */
export const LOGIN_CODE_TTL_MS = 5 * 60_000;
const LOGIN_CODE_MAX_TTL_MS = 15 * 60_000;

function loginCodeMac(key: Buffer, exp: string, nonce: string): string {
  return createHmac("sha256", key).update(`login-code:${exp}.${nonce}`).digest("base64url");
}

/**
 * A one-time sign-in code `<expiry>.<nonce>.<mac>`, signed with the key derived from the token. Whoever holds the
 * token (the daemon, or `agentd open` reading server.json) can mint one; the daemon accepts each nonce once.
 */
export function mintLoginCode(token: string, ttlMs = LOGIN_CODE_TTL_MS): string {
  const exp = String(Math.floor((Date.now() + ttlMs) / 1000));
  const nonce = randomBytes(16).toString("base64url");
  return `${exp}.${nonce}.${loginCodeMac(deriveKey(token), exp, nonce)}`;
}

/** The URL that signs a browser in with a fresh one-time code. */
export function loginLink(baseUrl: string, token: string): string {
  return `${baseUrl}/login?code=${encodeURIComponent(mintLoginCode(token))}`;
}

function deriveKey(token: string): Buffer {
  return createHash("sha256").update(`agentd-cookie-v1:${token}`).digest();
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const i = part.indexOf("=");
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "::1", "[::1]"]);

/** The host name of a Host header / URL authority, lower-cased, without port (IPv6 keeps its brackets). */
export function hostnameOf(authority: string): string {
  const a = authority.trim().toLowerCase();
  if (a.startsWith("[")) {
    const end = a.indexOf("]");
    return end > 0 ? a.slice(0, end + 1) : a;
  }
  const colon = a.lastIndexOf(":");
  return colon >= 0 ? a.slice(0, colon) : a;
}

/** DNS-rebinding guard: the Host header must name a loopback address or a configured host. */
export function isAllowedHost(authority: string | undefined, extra: ReadonlySet<string>): boolean {
  if (!authority) return false;
  const h = hostnameOf(authority);
  return LOOPBACK_NAMES.has(h) || h.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(h) || extra.has(h);
}

/** A browser request from another site: an Origin that is not this daemon, or Sec-Fetch-Site cross-site. */
export function isCrossSite(req: IncomingMessage): boolean {
  const site = req.headers["sec-fetch-site"];
  if (site === "cross-site") return true;
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  // Chromium sends `Origin: null` for a same-origin form post when the page's Referrer-Policy is no-referrer (as
  // ours is). Sec-Fetch-Site is set by the browser and cannot be forged by a page, so "same-origin" settles it;
  // "same-site" would not (another port on localhost is the same site).
  if (origin === "null") return site !== "same-origin";
  try {
    const u = new URL(origin);
    return u.host.toLowerCase() !== String(req.headers.host ?? "").toLowerCase();
  } catch {
    return true;
  }
}
