import { rawRequest } from "./http.js";
import { fillPath, type Json, type Operation, operations } from "./openapi-ops.js";

/** One way of asking without being allowed to. `withToken`: the attack carries the real token where it counts. */
interface Attack {
  name: string;
  /** Applies to public operations too (the Host and cross-site checks guard every route). */
  evenPublic: boolean;
  headers(token: string, host: string): Record<string, string>;
  query?(token: string): string;
}

const FORGED_COOKIE = `agentd_session=${Math.floor(Date.now() / 1000) + 3600}.AAAAAAAAAAAAAAAAAAAAAA.forgedmacforgedmacforgedmacforgedmacforged`;

export const ATTACKS: Attack[] = [
  { name: "no token", evenPublic: false, headers: () => ({}) },
  { name: "wrong token", evenPublic: false, headers: () => ({ authorization: "Bearer not-the-token" }) },
  {
    name: "token in the query",
    evenPublic: false,
    headers: () => ({}),
    query: (t) => `token=${encodeURIComponent(t)}`,
  },
  {
    name: "bad Host (DNS rebinding)",
    evenPublic: true,
    headers: (t) => ({ authorization: `Bearer ${t}`, host: "evil.example:80" }),
  },
  {
    name: "cross-site Origin",
    evenPublic: true,
    headers: (t, host) => ({ authorization: `Bearer ${t}`, host, origin: "https://evil.example" }),
  },
  {
    name: "Origin: null from another site",
    evenPublic: true,
    headers: (t, host) => ({ authorization: `Bearer ${t}`, host, origin: "null", "sec-fetch-site": "cross-site" }),
  },
  { name: "cookie without sign-in", evenPublic: false, headers: () => ({ cookie: FORGED_COOKIE }) },
];

export interface MatrixResult {
  operations: number;
  requests: number;
  /** Requests that were not refused (anything but 401/403), with what came back. */
  allowed: Array<{ attack: string; method: string; path: string; status: number }>;
}

/**
 * The operation answers a query token by design (declared in the document as a `token` query parameter or a
 * query-string security scheme, e.g. the event streams for EventSource clients on loopback): that one attack
 * does not apply to it.
 */
function acceptsQueryToken(doc: Json, op: Operation): boolean {
  if (op.params.some((p) => p.in === "query" && p.name === "token")) return true;
  const schemes = doc.components?.securitySchemes ?? {};
  const opDoc = doc.paths?.[op.path]?.[op.method.toLowerCase()];
  const security: Json[] = opDoc?.security ?? doc.security ?? [];
  return security.some((req: Json) => Object.keys(req).some((k) => schemes[k]?.in === "query"));
}

/** Every operation of the served document × every attack: each must be refused (401 or 403). */
export async function runAuthMatrix(base: string, token: string, sessionId: string): Promise<MatrixResult> {
  const host = new URL(base).host;
  const doc = JSON.parse((await rawRequest(base, "GET", "/api/v1/openapi.json", {})).text);
  const ops = operations(doc);
  const result: MatrixResult = { operations: ops.length, requests: 0, allowed: [] };
  for (const op of ops) {
    const path = fillPath(op.path, () => encodeURIComponent(sessionId));
    for (const a of ATTACKS) {
      if (op.public && !a.evenPublic) continue;
      if (a.query && acceptsQueryToken(doc, op)) continue;
      const url = a.query ? `${path}?${a.query(token)}` : path;
      const headers: Record<string, string> = { host, ...a.headers(token, host) };
      const body = op.body ? "{}" : undefined;
      if (body) headers["content-type"] = "application/json";
      const res = await rawRequest(base, op.method, url, headers, body, { headersOnly: op.stream, timeoutMs: 10_000 });
      result.requests++;
      if (res.status !== 401 && res.status !== 403) {
        result.allowed.push({ attack: a.name, method: op.method, path: op.path, status: res.status });
      }
    }
  }
  return result;
}
