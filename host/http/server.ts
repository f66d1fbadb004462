import type { IncomingMessage, ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import type express from "express";
import type { NextFunction, Request, Response } from "express";
import { ApiError, defaultErrorCode, type ErrorCode, isApiError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { Owned, Registry } from "../../core/registry.js";
import type { AnyRoute, Principal, RouteResult } from "../../core/routes.js";
import { loadExpress, onFirstUse } from "../lazy.js";
import { type Authenticator, isAllowedHost, isCrossSite } from "./auth.js";
import { API_PREFIX, API_VERSION_HEADERS } from "./constants.js";
import { jsonBody } from "./json-body.js";
import { mountFallbackHome, mountLoginPages } from "./pages.js";
import { HttpSseStream, type SseHub } from "./sse.js";
import { type CompiledValidators, compileRoute, describeErrors } from "./validation.js";

export interface HttpOptions {
  routes: Registry<AnyRoute>;
  auth: Authenticator;
  log: Logger;
  hub: SseHub;
  allowedHosts: ReadonlySet<string>;
  maxBodyBytes: number;
  sseQueueBytes: number;
  /** Check every JSON response against its declared schema (tests turn this on to catch drift). */
  validateResponses: boolean;
  version: string;
  /** Whether a route owner's schemas are known-good (the host's, built-in plugins'): not checked against the meta-schema. */
  knownGoodSchemas?: (owner: string) => boolean;
}

const SECURITY_HEADERS = {
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Cross-Origin-Opener-Policy": "same-origin",
};

/**
 * The request listener. The express app behind it is built on the first request: loading express and
 * body-parser is the largest single cost of a cold start, and nothing needs them before a request arrives.
 */
export function createApp(opts: HttpOptions): AppListener {
  let app: express.Express | undefined;
  let arrived: () => void = () => {};
  const firstRequest = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    if (!app) {
      app = buildApp(opts);
      arrived();
    }
    app(req, res);
  };
  return Object.assign(listener, {
    firstRequest,
    async warm() {
      app ??= buildApp(opts);
      // body-parser, which the first request with a body would load otherwise (onFirstUse).
      loadExpress().json();
      // The routes every client calls first (create, list, open, events, chat); one per macrotask.
      for (const entry of opts.routes.entries()) {
        if (!FIRST_ROUTES.has(`${entry.item.method} ${entry.item.path}`)) continue;
        await new Promise<void>((resolve) => setImmediate(resolve));
        compiledFor(entry, opts);
      }
    },
  });
}

/**
 * Compiled by the warm-up. Only these: compiling every `/sessions*` route's validators (~40) holds ~4 MiB more of
 * idle RSS for routes compiled in a few ms on their first request anyway (docs/benchmarks.md, issue 16).
 */
const FIRST_ROUTES = new Set([
  "POST /sessions",
  "GET /sessions",
  "GET /sessions/:id",
  "GET /sessions/:id/events",
  "POST /sessions/:id/chat",
]);

export type AppListener = ((req: IncomingMessage, res: ServerResponse) => void) & {
  /**
   * Builds the app and readies the first routes' validators (precompiled by the build, else compiled with Ajv) now (after listening), off the requests'
   * path. Other routes are compiled on their first request: compiling all of them costs ~100 ms of CPU and several
   * MiB for routes that may never be called.
   */
  warm(): Promise<void>;
  /** Resolves once the first request has arrived (the express app is built for it). */
  readonly firstRequest: Promise<void>;
};

/** Compiled validators per route object (route objects of built-in plugins are shared by daemons in one process). */
const compiledCache = [new WeakMap<AnyRoute, CompiledValidators>(), new WeakMap<AnyRoute, CompiledValidators>()];

function compiledFor(entry: Owned<AnyRoute>, opts: HttpOptions): CompiledValidators {
  const route = entry.item;
  const cache = compiledCache[opts.validateResponses ? 1 : 0] as WeakMap<AnyRoute, CompiledValidators>;
  let c = cache.get(route);
  if (!c) {
    c = compileRoute(route, opts.validateResponses, !opts.knownGoodSchemas?.(entry.owner));
    cache.set(route, c);
  }
  return c;
}

function buildApp(opts: HttpOptions): express.Express {
  const express = loadExpress();
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");

  app.use((req: Request, res: Response, next: NextFunction) => {
    res.set(SECURITY_HEADERS);
    if (req.path === API_PREFIX || req.path.startsWith(`${API_PREFIX}/`)) res.set(API_VERSION_HEADERS);
    if (!isAllowedHost(req.headers.host, opts.allowedHosts)) {
      return sendError(
        res,
        new ApiError(403, "Host header not allowed (only loopback names or configured hosts)", {
          code: "host_not_allowed",
        }),
      );
    }
    if (isCrossSite(req))
      return sendError(res, new ApiError(403, "Cross-site request refused", { code: "cross_site" }));
    next();
  });

  mountLoginPages(app, opts.auth);

  // Routes are rebuilt lazily after the registry changes (plugins load or unload).
  let router: express.Router | undefined;
  opts.routes.onChange(() => {
    router = undefined;
  });
  app.use((req, res, next) => {
    router ??= buildRouter(opts);
    router(req, res, next);
  });
  mountFallbackHome(app, opts.version);

  app.use((req: Request, res: Response) => {
    const api = req.path.startsWith("/api/");
    sendError(
      res,
      api
        ? ApiError.notFound(`Unknown API route: ${req.method} ${req.path}`, "route_not_found")
        : ApiError.notFound("Not found"),
    );
  });

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const apiErr = toApiError(err);
    if (!isApiError(err) && apiErr.status >= 500)
      opts.log.error({ err, method: req.method, path: req.path }, "request failed");
    sendError(res, apiErr);
  });
  return app;
}

function toApiError(err: unknown): ApiError {
  if (isApiError(err)) return err;
  const type = (err as { type?: string } | null)?.type;
  if (type === "entity.too.large") {
    const limit = (err as { limit?: number }).limit;
    return new ApiError(413, `Request body too large${limit ? ` (limit ${limit} bytes)` : ""}`);
  }
  if (type === "entity.parse.failed")
    return ApiError.badRequest("Invalid JSON in request body", { code: "invalid_json" });
  if (type === "encoding.unsupported" || type === "charset.unsupported") {
    return new ApiError(415, "Unsupported body encoding");
  }
  if (type === "request.aborted") return ApiError.badRequest("Request aborted");
  // The router's decoding of a path parameter (`/sessions/%zz`): express marks it 400.
  if (err instanceof URIError) return ApiError.badRequest("Malformed percent-encoding in the URL");
  // Any other client error raised by express or body-parser (http-errors marks them with a 4xx status and
  // `expose`), e.g. a body whose Content-Encoding does not match its bytes: its own status, a generic message.
  const status = (err as { status?: unknown } | null)?.status;
  if (typeof status === "number" && status >= 400 && status < 500) {
    return new ApiError(status, status === 415 ? "Unsupported body encoding" : "Malformed request body or URL");
  }
  return new ApiError(500, "Internal server error");
}

export function sendError(res: ServerResponse, err: ApiError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // `code` from the error, else from `extra` or the status (an ApiError of an older copy of this module has none).
  const { code, ...rest } = err.extra ?? {};
  const body = JSON.stringify({ error: err.message, code: err.code ?? code ?? defaultErrorCode(err.status), ...rest });
  res.writeHead(err.status, {
    "Content-Type": "application/json; charset=utf-8",
    "Cache-Control": "no-store",
    "Content-Length": Buffer.byteLength(body),
  });
  res.end(body);
}

/** Literal segments sort before parameters, so `/sessions/events` wins over `/sessions/:id`. */
function bySpecificity(a: Owned<AnyRoute>, b: Owned<AnyRoute>): number {
  const sa = a.item.path.split("/");
  const sb = b.item.path.split("/");
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    const pa = (sa[i] ?? "").startsWith(":") ? 1 : 0;
    const pb = (sb[i] ?? "").startsWith(":") ? 1 : 0;
    if (pa !== pb) return pa - pb;
  }
  return 0;
}

function buildRouter(opts: HttpOptions): express.Router {
  const express = loadExpress();
  const router = express.Router({ strict: false, caseSensitive: true });
  const parsers = new Map<number, express.RequestHandler>();
  const jsonParser = (limit: number) => {
    let p = parsers.get(limit);
    if (!p) {
      p = onFirstUse(() => express.json({ limit, type: () => true, strict: false }));
      parsers.set(limit, p);
    }
    return p;
  };
  for (const entry of [...opts.routes.entries()].sort(bySpecificity)) {
    const route = entry.item;
    // Each route's validators are compiled on its first request or by the warm-up after listening, not at boot.
    const queryToken = entry.owner === "host" && route.queryToken === true;
    const method = route.method.toLowerCase() as "get" | "post" | "put" | "patch" | "delete";
    const parse = route.body ? jsonParser(route.bodyLimit ?? opts.maxBodyBytes) : undefined;
    router[method](
      (route.page ? "" : API_PREFIX) + route.path,
      async (req: Request, res: Response, next: NextFunction) => {
        try {
          await handle(route, compiledFor(entry, opts), parse, opts, req, res, queryToken);
        } catch (err) {
          next(err);
        }
      },
    );
  }
  return router;
}

/** A query or body that does not match the route's schema (Ajv's verdict), or a missing body. */
const INVALID: { code: ErrorCode } = { code: "validation_failed" };

async function handle(
  route: AnyRoute,
  v: CompiledValidators,
  parse: express.RequestHandler | undefined,
  opts: HttpOptions,
  req: Request,
  res: Response,
  queryToken: boolean,
): Promise<void> {
  const query = { ...(req.query as Record<string, unknown>) };
  // The query token never reaches a handler (or anything it might log).
  const tokenParam = query.token;
  if (queryToken) delete query.token;
  let principal: Principal = { kind: "anonymous" };
  if (route.auth !== "public") {
    const kind = opts.auth.authenticate(req) ?? (queryToken ? opts.auth.authenticateQuery(req, tokenParam) : null);
    if (!kind) throw new ApiError(401, "Authentication required");
    principal = { kind };
  }
  const params = { ...req.params } as Record<string, unknown>;
  if (v.params && !v.params(params)) throw ApiError.notFound(`Not found: ${describeErrors("path", v.params.errors)}`);
  if (v.query && !v.query(query)) throw ApiError.badRequest(describeErrors("query", v.query.errors), INVALID);
  let body: unknown;
  if (parse) {
    await new Promise<void>((resolve, reject) => parse(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
    body = req.body;
    if (body === undefined) {
      if (route.bodyRequired !== false) throw ApiError.badRequest("A JSON request body is required", INVALID);
    } else if (v.body && !v.body(body)) {
      throw ApiError.badRequest(describeErrors("body", v.body.errors), INVALID);
    }
  }
  const ac = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) ac.abort();
  });
  const result = await route.handler({
    params,
    query,
    body,
    headers: req.headers,
    apiBase: API_PREFIX,
    principal,
    signal: ac.signal,
  });
  send(route, v, opts, req, res, result);
}

function send(
  route: AnyRoute,
  v: CompiledValidators,
  opts: HttpOptions,
  req: IncomingMessage,
  res: ServerResponse,
  result: RouteResult,
): void {
  if ("sse" in result) {
    if (req.method === "HEAD") {
      // The headers of the stream, and the end: a HEAD request never receives (or waits for) a body.
      res.writeHead(200, {
        ...API_VERSION_HEADERS,
        "Content-Type": "text/event-stream; charset=utf-8",
        "Cache-Control": "no-cache, no-transform",
      });
      res.end();
      return;
    }
    const header = req.headers["last-event-id"];
    // The header (sent by a reconnecting EventSource) wins over the query (a first connection's resume point).
    const queried = (req as { query?: { lastEventId?: unknown } }).query?.lastEventId;
    const last = typeof header === "string" ? header : typeof queried === "string" ? queried : undefined;
    const stream = new HttpSseStream(res, last, opts.sseQueueBytes, API_VERSION_HEADERS);
    opts.hub.add(stream);
    const started = result.sse(stream);
    started?.catch((err) => {
      opts.log.error({ err, path: route.path }, "event stream failed");
      stream.close();
    });
    return;
  }
  const status = result.status ?? 200;
  if ("html" in result) {
    res.writeHead(status, {
      ...result.headers,
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
    });
    res.end(result.html);
    return;
  }
  if ("bytes" in result) {
    const headers = { "Cache-Control": "no-store", ...result.headers, "Content-Type": result.contentType };
    const { bytes } = result;
    if (!(bytes instanceof Uint8Array || Array.isArray(bytes))) {
      res.writeHead(status, headers);
      (bytes as Readable).pipe(res);
      return;
    }
    const parts = bytes instanceof Uint8Array ? [bytes] : bytes;
    // JSON sent as bytes (a listing or a session read whole, serialised as it was read) is checked as any JSON reply.
    if (opts.validateResponses && result.contentType.startsWith("application/json")) {
      checkResponse(route, v, opts, status, JSON.parse(Buffer.concat(parts).toString("utf8")));
    }
    endWithParts(res, status, headers, parts);
    return;
  }
  if (opts.validateResponses) checkResponse(route, v, opts, status, result.body);
  const json = jsonBody(result.body);
  const headers = { ...result.headers, "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" };
  if (typeof json !== "string") {
    endWithParts(res, status, headers, json);
    return;
  }
  res.writeHead(status, { ...headers, "Content-Length": Buffer.byteLength(json) });
  res.end(json);
}

/** Throws (a 500) when a reply does not match the schema its route declares for the status. */
function checkResponse(route: AnyRoute, v: CompiledValidators, opts: HttpOptions, status: number, body: unknown): void {
  const check = v.responses.get(status);
  if (!check || check(body)) return;
  const msg = describeErrors(`response ${status}`, check.errors);
  opts.log.error({ route: route.operationId }, `response does not match its schema: ${msg}`);
  throw new ApiError(500, `Response does not match its declared schema: ${msg}`);
}

function endWithParts(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  parts: readonly Uint8Array[],
): void {
  res.writeHead(status, { ...headers, "Content-Length": parts.reduce((n, p) => n + p.byteLength, 0) });
  // Corked: the parts leave in one write (writev), not a system call each.
  res.cork();
  for (const part of parts) res.write(part);
  res.end();
}
