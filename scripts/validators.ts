/**
 * The built-in routes' request validators as code, generated at build time (scripts/bundle.ts): Ajv's standalone
 * code for every params, query and body schema of the routes whose owner is known-good (the host's, built-in
 * plugins'), compiled with the daemon's own Ajv options, exported under host/http/precompiled.ts' names. The
 * daemon looks a validator up by that name and compiles any other schema with Ajv at run time, as before.
 */

import { createRequire } from "node:module";
import type { TSchema } from "@sinclair/typebox";
import { Ajv } from "ajv";
import type { Owned } from "../core/registry.js";
import type { AnyRoute } from "../core/routes.js";
import { type AjvMode, precompiledName } from "../host/http/precompiled.js";
import { ajvOptions } from "../host/http/validation.js";

// CommonJS modules whose default export TypeScript's ES module view does not type as callable.
const require = createRequire(import.meta.url);
const standaloneCode = require("ajv/dist/standalone") as (ajv: Ajv, refs: Record<string, string>) => string;
const addFormats = require("ajv-formats") as (ajv: Ajv) => Ajv;

/** CommonJS source exporting one validator per distinct (mode, schema) of `entries`. */
export function validatorsSource(entries: Iterable<Owned<AnyRoute>>, knownGood: (owner: string) => boolean): string {
  const schemas: Record<AjvMode, Map<string, TSchema>> = { coercing: new Map(), strict: new Map() };
  const add = (mode: AjvMode, schema: TSchema | undefined) => {
    if (schema) schemas[mode].set(precompiledName(mode, schema), schema);
  };
  for (const { owner, item } of entries) {
    if (!knownGood(owner)) continue;
    add("coercing", item.params);
    add("coercing", item.query);
    add("strict", item.body);
  }
  const parts: string[] = [];
  for (const mode of ["coercing", "strict"] as const) {
    if (schemas[mode].size === 0) continue;
    const ajv = new Ajv({ ...ajvOptions(mode), code: { source: true } });
    addFormats(ajv);
    const refs: Record<string, string> = {};
    for (const [name, schema] of schemas[mode]) {
      ajv.addSchema(schema, name);
      refs[name] = name;
    }
    // Each configuration's code in its own scope (both declare validate functions and formats of the same names).
    parts.push(`part(function (module, exports) {\n${standaloneCode(ajv, refs)}\n});`);
  }
  return [
    '"use strict";',
    "function part(f) { const m = { exports: {} }; f(m, m.exports); Object.assign(module.exports, m.exports); }",
    ...parts,
    "",
  ].join("\n");
}
