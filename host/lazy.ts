import { createRequire } from "node:module";

// Modules the daemon needs only on some paths (a config file, a request, a class to construct) are required on
// first use instead of imported at boot: each costs tens of milliseconds of module loading at cold start.
const require = createRequire(import.meta.url);

export type AjvModule = typeof import("ajv");
export type ExpressModule = typeof import("express");

let expressModule: ExpressModule | undefined;

/** express (with body-parser, ~90 ms to load): required when the first request arrives, not at boot. */
export function loadExpress(): ExpressModule {
  expressModule ??= require("express") as ExpressModule;
  return expressModule;
}

let ajvModule: AjvModule | undefined;

/** The ajv module (CommonJS, so it can be loaded synchronously on first use). */
export function loadAjv(): AjvModule {
  ajvModule ??= require("ajv") as AjvModule;
  return ajvModule;
}

/** Requires a CommonJS module on first use; the same instance an `import` of it would give. */
export function lazyRequire<T>(id: string): T {
  return require(id) as T;
}
