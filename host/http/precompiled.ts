import { createHash } from "node:crypto";
import type { TSchema } from "@sinclair/typebox";
import type { ValidateFunction } from "ajv";
import { loadVendored } from "../lazy.js";

/** The two Ajv configurations of validation.ts: query strings and path params are coerced, bodies are not. */
export type AjvMode = "coercing" | "strict";

/** Validators by {@link precompiledName}: the build's `vendor-validators.cjs`, or one a test installs. */
export type PrecompiledTable = Record<string, ValidateFunction | undefined>;

/**
 * The export name of a schema's precompiled validator: a hash of the Ajv configuration and the schema's JSON (a
 * schema changed since the build has another name, and is compiled at run time as before).
 */
export function precompiledName(mode: AjvMode, schema: TSchema): string {
  return `v${createHash("sha1").update(mode).update("\0").update(JSON.stringify(schema)).digest("hex")}`;
}

let table: PrecompiledTable | null | undefined;

/**
 * The built-in routes' validators, generated at build time (scripts/validators.ts, Ajv's standalone code) into one
 * file next to the daemon's bundle: the first requests then neither load Ajv and ajv-formats nor compile a schema
 * (docs/benchmarks.md, issue 27). The compiled modules (a bare tsc, the tests) have no such file: undefined.
 */
export function precompiledValidator(mode: AjvMode, schema: TSchema): ValidateFunction | undefined {
  if (table === undefined) table = loadVendored<PrecompiledTable>("validators") ?? null;
  return table?.[precompiledName(mode, schema)];
}

/** Installs a table instead of the build's (tests of the generated code); `undefined` reads the build's again. */
export function setPrecompiledTable(t: PrecompiledTable | undefined): void {
  table = t;
}
