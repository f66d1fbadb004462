import type { TSchema } from "@sinclair/typebox";
import type { Owned } from "../../core/registry.js";
import { type AnyRoute, isResponseSpec, type RouteResponses } from "../../core/routes.js";
import { ErrorSchema } from "../../core/schemas.js";
import { API_PREFIX } from "./constants.js";

type Json = Record<string, unknown>;

const ERROR_TEXT: Record<number, string> = {
  400: "Bad request: malformed JSON, or a body, query or parameter that does not match the schema",
  401: "Authentication required (loopback Bearer token or a browser login session)",
  403: "Refused: Host header not allowed (DNS rebinding) or cross-site request",
  404: "Unknown session or target",
  409: "Conflict with the current session state",
  413: "Request body too large",
  500: "Internal error",
};

/** `/sessions/:id` -> `/sessions/{id}` */
export function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

/**
 * Builds the OpenAPI 3.1 document from the route declarations the server enforces. Schemas carrying a `title`
 * become named components (`#/components/schemas/<title>`), so shared shapes are written once.
 */
export function buildOpenApi(routes: Owned<AnyRoute>[], version: string): Json {
  const components: Record<string, Json> = {};
  const hoist = (schema: TSchema): Json => hoistNamed(JSON.parse(JSON.stringify(schema)) as Json, components);
  hoist(ErrorSchema);

  const paths: Record<string, Record<string, Json>> = {};
  const sorted = routes
    .filter((r) => !r.item.page)
    .sort((a, b) => a.item.path.localeCompare(b.item.path) || a.item.method.localeCompare(b.item.method));
  for (const { owner, item: r } of sorted) {
    const op: Json = {
      operationId: r.operationId,
      summary: r.summary,
      tags: r.tags ?? [owner],
      "x-agentd-plugin": owner,
    };
    if (r.description) op.description = r.description;
    const parameters: Json[] = [];
    for (const [where, schema] of [
      ["path", r.params],
      ["query", r.query],
    ] as const) {
      if (!schema) continue;
      const props = ((schema as Json).properties ?? {}) as Record<string, TSchema>;
      const required = new Set(((schema as Json).required as string[] | undefined) ?? []);
      for (const [name, s] of Object.entries(props)) {
        const p: Json = { name, in: where, required: where === "path" || required.has(name), schema: hoist(s) };
        if (s.description) p.description = s.description;
        parameters.push(p);
      }
    }
    if (parameters.length) op.parameters = parameters;
    if (r.body) {
      op.requestBody = {
        required: r.bodyRequired !== false,
        content: { "application/json": { schema: hoist(r.body) } },
      };
    }
    const responses: Record<string, Json> = {};
    for (const [status, spec] of Object.entries(r.responses as RouteResponses)) {
      const schema = isResponseSpec(spec) ? spec.schema : spec;
      const ct = (isResponseSpec(spec) && spec.contentType) || "application/json";
      const desc = (isResponseSpec(spec) && spec.description) || schema?.description || "Success";
      responses[status] = schema
        ? { description: desc, content: { [ct]: { schema: hoist(schema) } } }
        : { description: desc };
    }
    const errors = new Set<number>(r.errors ?? []);
    if (r.body || r.query) errors.add(400);
    if (r.params) errors.add(404);
    if (r.body) errors.add(413);
    if (r.auth !== "public") errors.add(401);
    errors.add(403);
    errors.add(500);
    for (const status of [...errors].sort()) {
      responses[String(status)] = {
        description: ERROR_TEXT[status] ?? "Error",
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      };
    }
    op.responses = responses;
    if (r.auth === "public") op.security = [];
    else if (r.queryToken) op.security = [{ loopbackBearer: [] }, { webSession: [] }, { loopbackQueryToken: [] }];
    const path = toOpenApiPath(API_PREFIX + r.path);
    paths[path] ??= {};
    (paths[path] as Record<string, Json>)[r.method.toLowerCase()] = op;
  }

  // The contract's name for the wire events (docs/api-v1.md) is WebEvent; the document's union is SessionEvent.
  if (components.SessionEvent) {
    components.WebEvent = {
      title: "WebEvent",
      description: "The contract's name for an event of the two event streams: the same shape as SessionEvent.",
      $ref: "#/components/schemas/SessionEvent",
    };
  }
  return {
    openapi: "3.1.1",
    info: {
      title: "agentd Local Agent Daemon Integration API",
      version: "1.0.0",
      description: `The stable integration API of agentd ${version}. Generated from the routes the daemon serves.`,
    },
    servers: [{ url: "{baseUrl}", variables: { baseUrl: { default: "http://127.0.0.1:7878" } } }],
    security: [{ loopbackBearer: [] }, { webSession: [] }],
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        loopbackBearer: {
          type: "http",
          scheme: "bearer",
          description: "The token from server.json in the daemon home; accepted only from a loopback peer.",
        },
        loopbackQueryToken: {
          type: "apiKey",
          in: "query",
          name: "token",
          description:
            "The same token as ?token= (for EventSource, which cannot send headers); only on the two event streams, " +
            "only from a loopback peer.",
        },
        webSession: {
          type: "apiKey",
          in: "cookie",
          name: "agentd_session",
          description: "Set by the browser login flow (GET/POST /login).",
        },
      },
    },
  };
}

const NAME_RE = /^[A-Z][A-Za-z0-9]*$/;

function hoistNamed(schema: Json, components: Record<string, Json>): Json {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") return hoistNamed(v as Json, components);
    return v;
  };
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) out[k] = walk(v);
  const title = out.title;
  if (typeof title === "string" && NAME_RE.test(title)) {
    const existing = components[title];
    if (existing && JSON.stringify(existing) !== JSON.stringify(out)) {
      throw new Error(`two different schemas are named "${title}" in the OpenAPI document`);
    }
    components[title] = out;
    return { $ref: `#/components/schemas/${title}` };
  }
  return out;
}
