import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { isAbsolute, join, resolve } from "node:path";
import type { ErrorObject, ValidateFunction } from "ajv";
import { type Static, T } from "../../core/index.js";

/*
 * The `mcpServers` format MCP clients share: `{"<name>": {command, args?, env?, cwd?} | {url, headers?}}`.
 * Unknown keys are allowed because configs are often copied from other clients (`alwaysAllow`, `autoApprove`, ...);
 * the keys we read are checked strictly.
 */

const Common = {
  /** Per tool call, ms. */
  timeoutMs: T.Optional(T.Integer({ minimum: 100, maximum: 3_600_000 })),
  /** Connect + initial tool listing, ms. */
  connectTimeoutMs: T.Optional(T.Integer({ minimum: 100, maximum: 600_000 })),
  disabled: T.Optional(T.Boolean()),
};

const StdioEntrySchema = T.Object({
  type: T.Optional(T.Literal("stdio")),
  command: T.String({ minLength: 1 }),
  args: T.Optional(T.Array(T.String())),
  env: T.Optional(T.Record(T.String(), T.String())),
  cwd: T.Optional(T.String({ minLength: 1 })),
  ...Common,
});

const HttpEntrySchema = T.Object({
  type: T.Optional(T.Union([T.Literal("http"), T.Literal("streamable-http"), T.Literal("streamableHttp")])),
  url: T.String({ pattern: "^https?://" }),
  headers: T.Optional(T.Record(T.String(), T.String())),
  ...Common,
});

type StdioEntry = Static<typeof StdioEntrySchema>;
type HttpEntry = Static<typeof HttpEntrySchema>;

interface CommonConfig {
  timeoutMs?: number;
  connectTimeoutMs?: number;
  disabled: boolean;
}

export interface StdioServerConfig extends CommonConfig {
  transport: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Absolute. */
  cwd?: string;
}

export interface HttpServerConfig extends CommonConfig {
  transport: "http";
  url: string;
  headers: Record<string, string>;
}

export type McpServerConfig = StdioServerConfig | HttpServerConfig;

/** One entry of a config file: usable, or invalid with a readable reason (reported, never fatal). */
export type ServerEntry =
  | { name: string; config: McpServerConfig; invalid?: undefined }
  | { name: string; config?: undefined; invalid: string; transport: "stdio" | "http" | "unknown" };

export interface ParsedServers {
  servers: ServerEntry[];
  /** A problem with the whole file or key (unreadable, not JSON, not an object). */
  error?: string;
}

/** Compiled at the first entry to check, not at import: most daemons have no MCP servers (boot time). */
let validators: { stdio: ValidateFunction<StdioEntry>; http: ValidateFunction<HttpEntry> } | undefined;
function entryValidators(): { stdio: ValidateFunction<StdioEntry>; http: ValidateFunction<HttpEntry> } {
  if (!validators) {
    const { Ajv } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
    const ajv = new Ajv({ allErrors: false, strict: false });
    validators = { stdio: ajv.compile<StdioEntry>(StdioEntrySchema), http: ajv.compile<HttpEntry>(HttpEntrySchema) };
  }
  return validators;
}

function describe(errors: ErrorObject[] | null | undefined): string {
  const e = errors?.[0];
  if (!e) return "is invalid";
  const where = e.instancePath ? e.instancePath.slice(1).replace(/\//g, ".") : "";
  if (e.keyword === "pattern" && where === "url") return "url must start with http:// or https://";
  return `${where ? `${where} ` : ""}${e.message ?? "is invalid"}`;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/**
 * Validates the value of an `mcpServers` key. `baseDir` resolves a relative stdio `cwd` (the project root for
 * project servers, the daemon home for global ones).
 */
export function parseServers(raw: unknown, baseDir: string): ParsedServers {
  if (raw === undefined || raw === null) return { servers: [] };
  if (!isObject(raw)) return { servers: [], error: "mcpServers must be an object of server name -> server entry" };
  const servers: ServerEntry[] = [];
  for (const [name, entry] of Object.entries(raw)) {
    servers.push(parseEntry(name, entry, baseDir));
  }
  return { servers };
}

function parseEntry(name: string, entry: unknown, baseDir: string): ServerEntry {
  if (!name.trim()) return { name, invalid: "the server name is empty", transport: "unknown" };
  if (!isObject(entry)) return { name, invalid: "the entry must be an object", transport: "unknown" };
  const hasCommand = "command" in entry;
  const hasUrl = "url" in entry;
  if (hasCommand && hasUrl)
    return { name, invalid: "give either command (stdio) or url (http), not both", transport: "unknown" };
  if (!hasCommand && !hasUrl) {
    const hint = entry.type === "sse" ? " (legacy SSE servers are not supported; use Streamable HTTP)" : "";
    return { name, invalid: `the entry needs command (stdio) or url (http)${hint}`, transport: "unknown" };
  }
  const { stdio: validateStdio, http: validateHttp } = entryValidators();
  if (hasCommand) {
    if (!validateStdio(entry)) return { name, invalid: describe(validateStdio.errors), transport: "stdio" };
    const cwd = entry.cwd === undefined ? undefined : isAbsolute(entry.cwd) ? entry.cwd : resolve(baseDir, entry.cwd);
    return {
      name,
      config: {
        transport: "stdio",
        command: entry.command,
        args: entry.args ?? [],
        env: entry.env ?? {},
        cwd,
        timeoutMs: entry.timeoutMs,
        connectTimeoutMs: entry.connectTimeoutMs,
        disabled: entry.disabled ?? false,
      },
    };
  }
  if (!validateHttp(entry)) return { name, invalid: describe(validateHttp.errors), transport: "http" };
  try {
    new URL(entry.url);
  } catch {
    return { name, invalid: "url is not a valid URL", transport: "http" };
  }
  return {
    name,
    config: {
      transport: "http",
      url: entry.url,
      headers: entry.headers ?? {},
      timeoutMs: entry.timeoutMs,
      connectTimeoutMs: entry.connectTimeoutMs,
      disabled: entry.disabled ?? false,
    },
  };
}

/** `<project>/.agentd/mcp.json`. The caller decides trust; a missing file is no servers, not an error. */
export function projectConfigPath(projectRoot: string): string {
  return join(projectRoot, ".agentd", "mcp.json");
}

/** Reads and validates a project's MCP servers. Never throws: file-level problems come back as `error`. */
export function loadProjectServers(projectRoot: string): ParsedServers {
  const file = projectConfigPath(projectRoot);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { servers: [] };
    return { servers: [], error: `${file}: could not be read (${(err as NodeJS.ErrnoException).code ?? "error"})` };
  }
  if (!text.trim()) return { servers: [] };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { servers: [], error: `${file}: not valid JSON (${(err as Error).message})` };
  }
  if (!isObject(json)) return { servers: [], error: `${file}: must be an object with an "mcpServers" key` };
  const parsed = parseServers(json.mcpServers, projectRoot);
  return parsed.error ? { ...parsed, error: `${file}: ${parsed.error}` } : parsed;
}
