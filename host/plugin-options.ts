import type { Ajv } from "ajv";
import type { PluginManifest } from "../core/plugin.js";
import { loadAjv } from "./lazy.js";

/**
 * Validates `pluginOptions.<id>` against a plugin's `configSchema` with Ajv (defaults applied). Third-party schemas
 * are checked against the JSON Schema meta-schema too; one validator per daemon.
 */
export class PluginOptionsValidator {
  private ajv: Ajv | undefined;

  private thirdPartyAjv(): Ajv {
    this.ajv ??= newAjv(true);
    return this.ajv;
  }

  /** The validated options (a copy, defaults applied); throws naming the offending key. */
  validate(m: PluginManifest, raw: object, builtin: boolean): Record<string, unknown> {
    if (!m.configSchema) return raw as Record<string, unknown>;
    const copy = structuredClone(raw) as Record<string, unknown>;
    if (isEmptyPlainObject(copy) && acceptsEmptyAsIs(m.configSchema)) return copy;
    const validate = (builtin ? builtinAjv() : this.thirdPartyAjv()).compile(m.configSchema);
    if (!validate(copy)) {
      const e = validate.errors?.[0];
      throw new Error(
        `pluginOptions.${m.id}${e?.instancePath.replace(/\//g, ".") ?? ""} ${e?.message ?? "is invalid"}`,
      );
    }
    return copy;
  }
}

const EMPTY_SAFE_KEYS = new Set(["type", "properties", "additionalProperties", "description", "title", "$comment"]);

function isEmptyPlainObject(v: object): boolean {
  return Object.getPrototypeOf(v) === Object.prototype && Object.keys(v).length === 0;
}

/**
 * True when Ajv (with useDefaults) would accept `{}` and leave it unchanged: an object schema with no required
 * keys, no other constraints and no property defaults. Plugins without configured options skip loading and
 * compiling with Ajv at boot.
 */
function acceptsEmptyAsIs(schema: object): boolean {
  const s = schema as Record<string, unknown>;
  if (s.type !== "object" || !Object.keys(s).every((k) => EMPTY_SAFE_KEYS.has(k))) return false;
  const props = s.properties;
  if (props === undefined) return true;
  if (typeof props !== "object" || props === null) return false;
  return Object.values(props).every(
    (p) => typeof p === "boolean" || (typeof p === "object" && p !== null && !("default" in p)),
  );
}

function newAjv(validateSchema: boolean): Ajv {
  return new (loadAjv().Ajv)({ strict: false, useDefaults: true, validateSchema });
}

let sharedBuiltinAjv: Ajv | undefined;

/**
 * Built-in option schemas are known-good TypeBox schemas: checking them against the JSON Schema meta-schema
 * (compiling the meta-schema costs ~30 ms at every cold start) would only ever pass. One instance serves every
 * daemon in the process, so each built-in schema is compiled once (Ajv caches by schema object).
 */
function builtinAjv(): Ajv {
  sharedBuiltinAjv ??= newAjv(false);
  return sharedBuiltinAjv;
}
