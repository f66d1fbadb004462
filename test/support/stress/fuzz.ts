import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { makeTempHome, spawnDaemon } from "../../../testing/daemon.js";
import { startFakeProvider } from "../../../testing/fake-provider.js";
import { rawRequest } from "./http.js";
import { deref, fillPath, type Json, type Operation, operations } from "./openapi-ops.js";

/** Strings a hostile or unlucky client sends: traversal, NUL, bad encodings, huge and odd numbers, markup. */
const HOSTILE = [
  "",
  " ",
  ".",
  "..",
  "../../../../etc/passwd",
  "..\\..\\windows\\win.ini",
  "/etc/passwd",
  "~/.ssh/id_rsa",
  "a\u0000b",
  "%00",
  "%zz",
  "%",
  "%E0%A4%A",
  "%C0%AF",
  "%2e%2e%2f%2e%2e%2f",
  "9223372036854775808",
  "-9223372036854775809",
  "1e400",
  "-1",
  "NaN",
  "Infinity",
  "0x10",
  "<script>alert(1)</script>",
  "' OR 1=1 --",
  "$(touch /tmp/agentd-fuzz-pwned)",
  "`id`",
  "\u202e\ufeff\ud800",
  "http://127.0.0.1:1/",
  "x".repeat(5000),
];

/** Raw (already URL-encoded or deliberately malformed) path segments. */
const RAW_SEGMENTS = ["%zz", "%", "%E0%A4%A", "%C0%AF", "..%2F..%2Fetc", "%00", "a%2Fb", "%2e%2e", "x".repeat(400)];

interface FuzzRequest {
  op: Operation;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer | string;
  kind: string;
}

/** Percent-encodes the UTF-8 bytes of `s` (lone surrogates become U+FFFD, as a client library would send). */
function pct(s: string): string {
  let out = "";
  for (const b of Buffer.from(s, "utf8")) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9_.~-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function stringArb(schema: Json, key: string): fc.Arbitrary<string> {
  if (/url/i.test(key) || schema.format === "uri") {
    return fc.constantFrom("http://127.0.0.1:1/v1", "https://127.0.0.1:1/", "not a url", "file:///etc/passwd");
  }
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 40, 200);
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength: min, maxLength: Math.max(min, max) }) },
    { weight: 1, arbitrary: fc.constantFrom(...HOSTILE) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 30 }) },
  );
}

/** Values for a JSON schema: mostly of the right shape, sometimes out of range or of the wrong type. */
function valueArb(doc: Json, s0: Json, depth = 0, key = ""): fc.Arbitrary<unknown> {
  const s = deref(doc, s0) ?? {};
  if (depth > 5) return fc.constant(null);
  const wrong = fc.oneof(fc.constant(null), fc.boolean(), fc.constantFrom(...HOSTILE), fc.double(), fc.constant({}));
  let right: fc.Arbitrary<unknown>;
  if (s.const !== undefined) right = fc.constant(s.const);
  else if (Array.isArray(s.enum)) right = fc.constantFrom(...s.enum);
  else if (s.anyOf || s.oneOf)
    right = fc.oneof(...(s.anyOf ?? s.oneOf).map((x: Json) => valueArb(doc, x, depth + 1, key)));
  else if (s.type === "string") right = stringArb(s, key);
  else if (s.type === "integer" || s.type === "number") {
    right = fc.oneof(
      fc.integer({ min: s.minimum ?? -10, max: Math.min(s.maximum ?? 1000, 1e9) }),
      fc.constantFrom(2 ** 63, -(2 ** 63), 1e308, -1, 0, 2 ** 53, 0.5),
    );
  } else if (s.type === "boolean") right = fc.boolean();
  else if (s.type === "array") {
    right = fc.array(valueArb(doc, s.items ?? {}, depth + 1, key), { maxLength: Math.min(s.maxItems ?? 4, 4) });
  } else if (s.type === "object" || s.properties) {
    const props = Object.entries<Json>(s.properties ?? {});
    const required = new Set<string>(s.required ?? []);
    const rec: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [k, v] of props) rec[k] = valueArb(doc, v, depth + 1, k);
    right = fc.record(rec, { requiredKeys: [...required].filter((k) => k in rec) });
  } else right = fc.jsonValue({ maxDepth: 2 });
  return fc.oneof({ weight: 6, arbitrary: right }, { weight: 1, arbitrary: wrong });
}

function queryValueArb(doc: Json, schema: Json, name: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: valueArb(doc, schema, 0, name).map((v) => pct(String(v))) },
    { weight: 1, arbitrary: fc.constantFrom(...HOSTILE).map((v) => pct(v)) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
  );
}

function deep(n: number): string {
  return `${"[".repeat(n)}${"]".repeat(n)}`;
}

function bodyArb(
  doc: Json,
  schema: Json,
): fc.Arbitrary<{ kind: string; body?: Buffer | string; headers: Record<string, string> }> {
  const json = { "content-type": "application/json" };
  const valid = valueArb(doc, schema).map((v) => JSON.stringify(v) ?? "null");
  return fc.oneof(
    { weight: 6, arbitrary: valid.map((body) => ({ kind: "json", body, headers: json })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid, fc.nat())
        .map(([b, n]) => ({ kind: "truncated", body: b.slice(0, n % Math.max(b.length, 1)), headers: json })),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 100, max: 200_000 }).map((n) => ({ kind: "deep", body: deep(n), headers: json })),
    },
    {
      weight: 1,
      arbitrary: valid.map((b) => ({
        kind: "gzip",
        body: gzipSync(b),
        headers: { ...json, "content-encoding": "gzip" },
      })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid, fc.constantFrom("gzip", "deflate", "br", "zstd", "identity, gzip"))
        .map(([b, enc]) => ({
          kind: "not-compressed",
          body: b,
          headers: { ...json, "content-encoding": enc },
        })),
    },
    {
      weight: 1,
      arbitrary: valid.map((b) => ({
        kind: "truncated-gzip",
        body: gzipSync(b).subarray(0, 12),
        headers: { ...json, "content-encoding": "gzip" },
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom("utf-16", "latin1", "bogus").map((cs) => ({
        kind: "charset",
        body: "{}",
        headers: { "content-type": `application/json; charset=${cs}` },
      })),
    },
    {
      weight: 1,
      arbitrary: fc.jsonValue().map((v) => ({ kind: "wrong-json", body: JSON.stringify(v) ?? "null", headers: json })),
    },
    { weight: 1, arbitrary: fc.constant({ kind: "empty", body: "", headers: json }) },
    { weight: 1, arbitrary: fc.constant({ kind: "nul", body: '{"a":"\\u0000","b":"\u0000"}', headers: json }) },
    {
      weight: 1,
      arbitrary: fc.constant({
        kind: "huge-number",
        body: '{"n":1e99999,"m":-123456789012345678901234567890}',
        headers: json,
      }),
    },
  );
}

export function requestArb(doc: Json, ops: Operation[], ids: string[], token: string): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...ops).chain((op) => {
    const pathArb = fc.dictionary(fc.constant("x"), fc.constant("x")).chain(() =>
      fc
        .array(
          fc.oneof(
            { weight: 4, arbitrary: fc.constantFrom(...ids) },
            { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
            { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((s) => pct(s) || "x") },
          ),
          { minLength: 4, maxLength: 4 },
        )
        .map((segs) => {
          let i = 0;
          return fillPath(op.path, () => segs[i++ % segs.length] as string);
        }),
    );
    const queryParams = op.params.filter((p) => p.in === "query");
    const queryArb = fc
      .tuple(...queryParams.map((p) => fc.option(queryValueArb(doc, p.schema, p.name), { freq: 2 })), fc.boolean())
      .map((vals) => {
        const repeat = vals.pop() as boolean;
        const pairs: string[] = [];
        queryParams.forEach((p, k) => {
          const v = vals[k] as string | null;
          if (v !== null) pairs.push(`${p.name}=${v}`);
          if (v !== null && repeat) pairs.push(`${p.name}=${v}`);
        });
        return pairs.length ? `?${pairs.join("&")}` : "";
      });
    const body = op.body ? bodyArb(doc, op.body) : fc.constant({ kind: "none", body: undefined, headers: {} });
    return fc.tuple(pathArb, queryArb, body).map(([path, query, b]) => ({
      op,
      method: op.method,
      path: path + query,
      headers: { authorization: `Bearer ${token}`, ...b.headers },
      body: b.body,
      kind: b.kind,
    }));
  });
}

export interface FuzzStats {
  requests: number;
  seed: number;
  byStatus: Record<string, number>;
  /** Undeclared 5xx (a 500 is never acceptable): the first few, to reproduce. */
  failures: Array<{ status: number | string; method: string; path: string; kind: string; text: string }>;
  failureCount: number;
  healthChecks: number;
  healthFailures: number;
  /** RSS once warm (after a tenth of the requests, at least 1,000): the start of the band. */
  rssStart: number;
  /** RSS half way. */
  rssMid: number;
  rssPeak: number;
  rssEnd: number;
  /** RSS growth per 10,000 requests over the second half. */
  rssGrowthPer10k: number;
  /** V8 heap in use (from GET /server/status) after warm-up and at the end. */
  heapStart: number;
  heapEnd: number;
  ms: number;
}

function rss(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * `requests` requests generated with fast-check from the served OpenAPI document (every operation), sent with
 * `concurrency` in flight, against a daemon in a child process whose home, HOME and browse roots are temporary.
 */
export async function runFuzz(opts: {
  requests: number;
  seed: number;
  concurrency?: number;
  /** Only the operations whose id matches (to find which one misbehaves). */
  only?: RegExp;
}): Promise<FuzzStats> {
  const fake = await startFakeProvider();
  const home = makeTempHome("agentd-fuzz-");
  const work = join(home, "work");
  mkdirSync(join(work, "sub"), { recursive: true });
  writeFileSync(join(work, "a.txt"), "hello");
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({
      provider: { baseURL: fake.url, apiKey: "sk-test", model: "m" },
      defaultCwd: work,
      pluginOptions: { files: { browseRoots: [work] } },
    }),
  );
  const p = await spawnDaemon(home, { HOME: work });
  const pid = p.child.pid as number;
  const base = p.info.url;
  const token = p.info.token;
  const stats: FuzzStats = {
    requests: 0,
    seed: opts.seed,
    byStatus: {},
    failures: [],
    failureCount: 0,
    healthChecks: 0,
    healthFailures: 0,
    rssStart: 0,
    rssMid: 0,
    rssGrowthPer10k: 0,
    rssPeak: 0,
    rssEnd: 0,
    heapStart: 0,
    heapEnd: 0,
    ms: 0,
  };
  const t0 = Date.now();
  try {
    const doc = JSON.parse((await rawRequest(base, "GET", "/api/v1/openapi.json", {})).text);
    const ops = operations(doc).filter((o) => !opts.only || opts.only.test(o.operationId));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await p.client.post("/sessions", { cwd: work })).body.id as string);
    const arb = requestArb(doc, ops, ids, token);
    const health = async () => {
      stats.healthChecks++;
      const r = await rawRequest(base, "GET", "/api/v1/server/status", { authorization: `Bearer ${token}` }).catch(
        () => undefined,
      );
      if (r?.status !== 200) stats.healthFailures++;
      return r?.status === 200 ? (JSON.parse(r.text).memory?.heapUsed as number) : 0;
    };
    const fail = (status: number | string, r: FuzzRequest, text: string) => {
      stats.failureCount++;
      if (stats.failures.length < 20) {
        stats.failures.push({
          status,
          method: r.method,
          path: r.path.slice(0, 300),
          kind: r.kind,
          text: text.slice(0, 300),
        });
      }
    };
    const send = async (r: FuzzRequest) => {
      try {
        const res = await rawRequest(base, r.method, r.path, r.headers, r.body, {
          headersOnly: r.op.stream && r.method === "GET",
          timeoutMs: 30_000,
        });
        stats.byStatus[res.status] = (stats.byStatus[res.status] ?? 0) + 1;
        if (res.status >= 500 && (res.status === 500 || !r.op.statuses.includes(String(res.status)))) {
          fail(res.status, r, res.text);
        }
      } catch (err) {
        stats.byStatus.error = (stats.byStatus.error ?? 0) + 1;
        fail("error", r, String(err));
      }
    };
    const batch = 500;
    const warm = Math.max(1000, Math.floor(opts.requests / 10));
    const mid = Math.floor(opts.requests / 2);
    let midAt = 0;
    let sent = 0;
    for (let b = 0; sent < opts.requests; b++) {
      const n = Math.min(batch, opts.requests - sent);
      const reqs = fc.sample(arb, { numRuns: n, seed: opts.seed + b });
      let next = 0;
      const worker = async () => {
        for (let i = next++; i < reqs.length; i = next++) await send(reqs[i] as FuzzRequest);
      };
      await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, worker));
      sent += n;
      stats.requests = sent;
      const heap = await health();
      if (stats.rssStart === 0 && sent >= warm) {
        // The start band: once every lazy module is loaded and V8 and the allocator have sized themselves.
        stats.rssStart = rss(pid, "VmRSS");
        stats.heapStart = heap;
      }
      if (midAt === 0 && sent >= mid) {
        stats.rssMid = rss(pid, "VmRSS");
        midAt = sent;
      }
      stats.heapEnd = heap;
    }
    stats.rssPeak = rss(pid, "VmHWM");
    stats.rssEnd = rss(pid, "VmRSS");
    if (midAt > 0 && sent > midAt) stats.rssGrowthPer10k = ((stats.rssEnd - stats.rssMid) / (sent - midAt)) * 10_000;
  } finally {
    stats.ms = Date.now() - t0;
    p.child.kill("SIGTERM");
    await p.exited;
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
  return stats;
}
