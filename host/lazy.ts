import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { loadWithCodeCache } from "./code-cache.js";

// Modules the daemon needs only on some paths (a config file, a request, a class to construct) are required on
// first use instead of imported at boot: each costs tens of milliseconds of module loading at cold start.
const require = createRequire(import.meta.url);

export type AjvModule = typeof import("ajv");
export type ExpressModule = typeof import("express");
type RequestHandler = import("express").RequestHandler;

/**
 * A CommonJS dependency tree the build pre-bundled into one file next to the daemon's bundle (`vendor-<name>.cjs`,
 * scripts/bundle.ts): one file to read and compile instead of dozens of modules to resolve, stat and load (express
 * is ~50), loaded with the V8 code cache the build wrote for it (host/code-cache.ts). The compiled modules (a bare
 * tsc, the tests) have no such file beside them and load from node_modules.
 */
function vendored<T>(name: string, fromNodeModules: () => T): T {
  try {
    return loadWithCodeCache(fileURLToPath(new URL(`./vendor-${name}.cjs`, import.meta.url))).exports as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    return fromNodeModules();
  }
}

/** A file the build generated next to the bundle (`vendor-<name>.cjs`), or undefined when there is none. */
export function loadVendored<T>(name: string): T | undefined {
  return vendored<T | undefined>(name, () => undefined);
}

let expressModule: ExpressModule | undefined;

/**
 * express: required when the first request arrives, not at boot. The build's express loads body-parser on first use
 * (scripts/bundle.ts): create body parsers with {@link onFirstUse}.
 */
export function loadExpress(): ExpressModule {
  expressModule ??= vendored("express", () => require("express") as ExpressModule);
  return expressModule;
}

/**
 * A body parser created on the first request that reaches it: creating one loads body-parser, which a first `GET`
 * then never waits for. The warm-up after the first request loads it anyway (`AppListener.warm`), so a first `POST`
 * usually finds it loaded.
 */
export function onFirstUse(create: () => RequestHandler): RequestHandler {
  let parser: RequestHandler | undefined;
  return (req, res, next) => {
    parser ??= create();
    return parser(req, res, next);
  };
}

type AjvWithFormats = { ajv: AjvModule; formats: (ajv: InstanceType<AjvModule["Ajv"]>) => void };
let ajvModules: AjvWithFormats | undefined;

/** ajv and ajv-formats (one instance of ajv's code generator for both), loaded synchronously on first use. */
function loadAjvWithFormats(): AjvWithFormats {
  ajvModules ??= vendored("ajv", () => ({
    ajv: require("ajv") as AjvModule,
    formats: require("ajv-formats") as AjvWithFormats["formats"],
  }));
  return ajvModules;
}

/** The ajv module. */
export function loadAjv(): AjvModule {
  return loadAjvWithFormats().ajv;
}

/** ajv-formats' plugin, for an Ajv of {@link loadAjv}. */
export function loadAjvFormats(): AjvWithFormats["formats"] {
  return loadAjvWithFormats().formats;
}

/** Requires a CommonJS module on first use; the same instance an `import` of it would give. */
export function lazyRequire<T>(id: string): T {
  return require(id) as T;
}
