import type { TSchema } from "@sinclair/typebox";
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import { type AnyRoute, isResponseSpec, type RouteResponses } from "../../core/routes.js";
import { loadAjv, loadAjvFormats } from "../lazy.js";
import { type AjvMode, precompiledValidator } from "./precompiled.js";

/**
 * Schemas are not checked against the JSON Schema meta-schema at compile time: compiling the meta-schema costs
 * ~30-60 ms of CPU and ~2 MiB that the built-in routes (known-good TypeBox schemas) never need. Other plugins' route
 * schemas are checked explicitly (`compileRoute`), as Ajv would.
 */
function makeAjv(coerce: boolean): Ajv {
  const ajv = new (loadAjv().Ajv)(ajvOptions(coerce ? "coercing" : "strict"));
  loadAjvFormats()(ajv);
  return ajv;
}

// Built on the first request that needs a validator, not at boot (ajv and ajv-formats cost ~50 ms to load).
let ajvs: { coercing: Ajv; strict: Ajv } | undefined;

/** Query strings and path params arrive as strings: they are coerced to the declared types. Bodies are not. */
function validators(): { coercing: Ajv; strict: Ajv } {
  ajvs ??= { coercing: makeAjv(true), strict: makeAjv(false) };
  return ajvs;
}

/** The options of each Ajv (the build generates the precompiled validators with them, scripts/validators.ts). */
export function ajvOptions(mode: AjvMode): Record<string, unknown> {
  return {
    strict: false,
    coerceTypes: mode === "coercing",
    useDefaults: true,
    allErrors: false,
    validateSchema: false,
  };
}

export interface CompiledValidators {
  params?: ValidateFunction;
  query?: ValidateFunction;
  body?: ValidateFunction;
  responses: Map<number, ValidateFunction>;
}

/**
 * A route's validators. `checkSchemas`: check each schema against the meta-schema first (throws Ajv's own
 * `schema is invalid: ...`), for routes whose schemas are not the built-ins' known-good ones.
 */
export function compileRoute(route: AnyRoute, withResponses: boolean, checkSchemas = true): CompiledValidators {
  const out: CompiledValidators = { responses: new Map() };
  // Known-good schemas the build precompiled need no Ajv at all; any other is compiled (and Ajv loaded) here.
  const compile = (mode: AjvMode, schema: TSchema): ValidateFunction => {
    const ready = checkSchemas ? undefined : precompiledValidator(mode, schema);
    if (ready) return ready;
    const ajv = validators()[mode];
    if (checkSchemas) ajv.validateSchema(schema, true);
    return ajv.compile(schema);
  };
  if (route.params) out.params = compile("coercing", route.params);
  if (route.query) out.query = compile("coercing", route.query);
  if (route.body) out.body = compile("strict", route.body);
  if (withResponses) {
    const strictAjv = validators().strict;
    for (const [status, spec] of Object.entries(route.responses as RouteResponses)) {
      const schema: TSchema | undefined = isResponseSpec(spec) ? spec.schema : spec;
      const ct = isResponseSpec(spec) ? spec.contentType : undefined;
      if (schema && (!ct || ct === "application/json")) {
        if (checkSchemas) strictAjv.validateSchema(schema, true);
        out.responses.set(Number(status), strictAjv.compile(schema));
      }
    }
  }
  return out;
}

/** `query.limit must be <= 200`, `body must NOT have additional property "foo"`: one readable line. */
export function describeErrors(where: string, errors: ErrorObject[] | null | undefined): string {
  const e = errors?.[0];
  if (!e) return `${where} is invalid`;
  const path = `${where}${e.instancePath.replace(/\//g, ".")}`;
  switch (e.keyword) {
    case "additionalProperties":
      return `${path} must not have the property "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    case "required":
      return `${path} must have the property "${(e.params as { missingProperty: string }).missingProperty}"`;
    case "enum":
      return `${path} must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(", ")}`;
    case "const":
      return `${path} must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
    default:
      return `${path} ${e.message ?? "is invalid"}`;
  }
}
