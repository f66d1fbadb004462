import type { TSchema } from "@sinclair/typebox";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { type AnyRoute, isResponseSpec } from "../../core/routes.js";

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({ strict: false, coerceTypes: coerce, useDefaults: true, allErrors: false });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

/** Query strings and path params arrive as strings: they are coerced to the declared types. Bodies are not. */
const coercing = makeAjv(true);
const strictAjv = makeAjv(false);

export interface CompiledValidators {
  params?: ValidateFunction;
  query?: ValidateFunction;
  body?: ValidateFunction;
  responses: Map<number, ValidateFunction>;
}

export function compileRoute(route: AnyRoute, withResponses: boolean): CompiledValidators {
  const out: CompiledValidators = { responses: new Map() };
  if (route.params) out.params = coercing.compile(route.params);
  if (route.query) out.query = coercing.compile(route.query);
  if (route.body) out.body = strictAjv.compile(route.body);
  if (withResponses) {
    for (const [status, spec] of Object.entries(route.responses)) {
      const schema: TSchema | undefined = isResponseSpec(spec) ? spec.schema : spec;
      const ct = isResponseSpec(spec) ? spec.contentType : undefined;
      if (schema && (!ct || ct === "application/json")) out.responses.set(Number(status), strictAjv.compile(schema));
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
