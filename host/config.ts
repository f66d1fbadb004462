import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { type Static, Type as T } from "@sinclair/typebox";
import type { ErrorObject, ValidateFunction } from "ajv";
import { CAPABILITIES } from "../core/plugin.js";
import { PermissionsConfigSchema, SandboxConfigSchema } from "../core/sandbox.js";
import { loadAjv } from "./lazy.js";

export const DEFAULT_PORT = 7878;

/** The keys `settings.json` may also set (layered over the config file; see host/settings-store.ts). */
export const LayeredKeys = {
  provider: T.Optional(
    T.Object(
      {
        baseURL: T.Optional(T.String({ pattern: "^https?://" })),
        apiKey: T.Optional(T.String()),
        model: T.Optional(T.String({ minLength: 1 })),
      },
      { additionalProperties: false },
    ),
  ),
  defaultPersona: T.Optional(T.String({ minLength: 1 })),
  maxTurnIterations: T.Optional(T.Integer({ minimum: 10, maximum: 10000 })),
  permissionMode: T.Optional(T.String({ enum: ["default", "bypass"] })),
  theme: T.Optional(T.String({ minLength: 1 })),
  reasoning: T.Optional(T.String({ minLength: 1 })),
};

/** The global config file (`<home>/config.json|yaml|js|mjs`). Every key is documented in the README. */
export const ConfigSchema = T.Object(
  {
    server: T.Optional(
      T.Object(
        {
          host: T.Optional(T.String({ minLength: 1 })),
          port: T.Optional(T.Integer({ minimum: 0, maximum: 65535 })),
          allowedHosts: T.Optional(T.Array(T.String({ minLength: 1 }))),
          maxBodyBytes: T.Optional(T.Integer({ minimum: 1024 })),
          sseQueueBytes: T.Optional(T.Integer({ minimum: 16384 })),
        },
        { additionalProperties: false },
      ),
    ),
    ...LayeredKeys,
    defaultCwd: T.Optional(T.String({ minLength: 1 })),
    plugins: T.Optional(T.Array(T.String({ minLength: 1 }))),
    disabledPlugins: T.Optional(T.Array(T.String({ minLength: 1 }))),
    pluginOptions: T.Optional(T.Record(T.String(), T.Object({}))),
    /** Capabilities the user allows each third-party plugin (by id); a plugin holds what it declares and is allowed. */
    pluginCapabilities: T.Optional(
      T.Record(T.String(), T.Array(T.Union(Object.keys(CAPABILITIES).map((c) => T.Literal(c))), { uniqueItems: true })),
    ),
    logLevel: T.Optional(T.String({ enum: ["trace", "debug", "info", "warn", "error", "fatal", "silent"] })),
    confirmTimeoutMs: T.Optional(T.Integer({ minimum: 100, maximum: 86_400_000 })),
    contextWindow: T.Optional(T.Integer({ minimum: 1000 })),
    mcpServers: T.Optional(T.Record(T.String(), T.Object({}, { additionalProperties: true }))),
    hooks: T.Optional(T.Object({}, { additionalProperties: true })),
    /** The team server's database (AGENTD_DATABASE_URL wins): sessions live there instead of <home>/agentd.db. */
    database: T.Optional(
      T.Object(
        {
          url: T.Optional(T.String({ pattern: "^postgres(ql)?://" })),
          /** A turn's lease: a daemon that stops renewing it for this long has its turn taken over (default 15 s). */
          leaseTimeoutMs: T.Optional(T.Integer({ minimum: 300, maximum: 600_000 })),
        },
        { additionalProperties: false },
      ),
    ),
    sandbox: T.Optional(SandboxConfigSchema),
    permissions: T.Optional(PermissionsConfigSchema),
  },
  { additionalProperties: false },
);

export type GlobalConfig = Static<typeof ConfigSchema>;

export interface LoadedConfig {
  home: string;
  /** The config file that was read, if any. */
  file: string | undefined;
  config: GlobalConfig;
  provider: { baseURL?: string; apiKey?: string; model?: string };
}

export class ConfigError extends Error {}

const SEARCH_PLACES = ["config.json", "config.yaml", "config.yml", "config.mjs", "config.js", "config.cjs"];

export async function loadConfig(home: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedConfig> {
  let found: { config: unknown; filepath: string } | null = null;
  // cosmiconfig (and the yaml parser it brings) is loaded only when there is a file for it to read.
  if (SEARCH_PLACES.some((name) => existsSync(join(home, name)))) {
    try {
      // CommonJS, required (the bundled daemon has no `import()` of its own: core/import-module.ts).
      const { cosmiconfig } = createRequire(import.meta.url)("cosmiconfig") as typeof import("cosmiconfig");
      const explorer = cosmiconfig("agentd", { searchPlaces: SEARCH_PLACES, stopDir: home, cache: false });
      found = await explorer.search(home);
    } catch (err) {
      throw new ConfigError(`Could not read the config in ${home}: ${(err as Error).message}`);
    }
  }
  // cosmiconfig walks up from `home`; only a file inside the home counts.
  if (found && resolve(found.filepath, "..") !== home) found = null;
  const raw = found?.config ?? {};
  const config = validateConfig(raw, found?.filepath ?? join(home, "config.json"));
  const provider = {
    // The environment of this launch wins over the file.
    baseURL: env.OPENAI_BASE_URL || config.provider?.baseURL,
    apiKey: env.OPENAI_API_KEY || config.provider?.apiKey,
    model: env.AGENTD_MODEL || config.provider?.model,
  };
  return { home, file: found?.filepath, config, provider };
}

let validate: ValidateFunction | undefined;

export function validateConfig(raw: unknown, file: string): GlobalConfig {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new ConfigError(`${file}: the config must be an object`);
  }
  // Every key is optional: an empty object (no config file) is valid without compiling the schema at boot.
  if (Object.getPrototypeOf(raw) === Object.prototype && Object.keys(raw).length === 0) return raw as GlobalConfig;
  if (!validate) {
    const { Ajv } = loadAjv();
    validate = new Ajv({ allErrors: false, strict: false }).compile(ConfigSchema);
  }
  if (!validate(raw)) throw new ConfigError(`${file}: ${describeConfigError(validate.errors?.[0])}`);
  return raw as GlobalConfig;
}

export function describeConfigError(e: ErrorObject | undefined): string {
  if (!e) return "invalid config";
  const key = e.instancePath.replace(/^\//, "").replace(/\//g, ".");
  if (e.keyword === "additionalProperties") {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    return `unknown key "${key ? `${key}.` : ""}${extra}"`;
  }
  if (e.keyword === "enum") {
    return `"${key}" must be one of ${(e.params as { allowedValues: string[] }).allowedValues.join(", ")}`;
  }
  return `"${key || "(root)"}" ${e.message ?? "is invalid"}`;
}
