/** The operations of a served OpenAPI document, as the stress suites need them. */

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is arbitrary JSON
export type Json = any;

export interface Param {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required: boolean;
  schema: Json;
}

export interface Operation {
  method: string;
  /** The path template as in the document, e.g. /api/v1/sessions/{id}. */
  path: string;
  operationId: string;
  params: Param[];
  body: Json | undefined;
  /** Public operations (empty `security`) need no credentials. */
  public: boolean;
  /** Response statuses the document declares. */
  statuses: string[];
  /** Answers an event stream (never ends by itself). */
  stream: boolean;
}

export function operations(doc: Json): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(item)) {
      if (!op || typeof op !== "object" || !op.responses) continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Json) => deref(doc, p));
      const content = deref(doc, op.requestBody)?.content ?? {};
      const ok = Object.values<Json>(op.responses)[0]?.content ?? {};
      ops.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId ?? `${method} ${path}`,
        params: params.map((p: Json) => ({
          name: p.name,
          in: p.in,
          required: p.required === true,
          schema: deref(doc, p.schema) ?? {},
        })),
        body: content["application/json"]?.schema,
        public: Array.isArray(op.security) && op.security.length === 0,
        statuses: Object.keys(op.responses),
        stream: Object.keys(ok).some((t) => t.startsWith("text/event-stream")),
      });
    }
  }
  return ops;
}

export function deref(doc: Json, s: Json): Json {
  let cur = s;
  for (let i = 0; i < 20 && cur && typeof cur === "object" && typeof cur.$ref === "string"; i++) {
    const parts = (cur.$ref as string).replace(/^#\//, "").split("/");
    cur = parts.reduce((o: Json, k: string) => o?.[k.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
  }
  return cur;
}

/** Fills a path template: each `{name}` gets `value(name)` as is (the caller decides how it is encoded). */
export function fillPath(template: string, value: (name: string) => string): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => value(name));
}
