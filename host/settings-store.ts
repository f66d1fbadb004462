import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Type as T } from "@sinclair/typebox";
import type { ValidateFunction } from "ajv";
import type { Disposable } from "../core/disposable.js";
import { type DocumentStore, FileDocuments } from "../core/documents.js";
import { ApiError } from "../core/errors.js";
import {
  type DaemonSettings,
  LAYERED_KEYS,
  type LayeredKey,
  type PermissionMode,
  type SettingSource,
  type UserSettings,
  type UserSettingsPatch,
} from "../core/registries.js";
import { ConfigError, describeConfigError, type GlobalConfig, LayeredKeys } from "./config.js";
import { loadAjv } from "./lazy.js";

export const SETTINGS_FILE = "settings.json";
export const DEFAULT_TURN_CAP = 500;

/** The keys of `<home>/settings.json`; the same meaning as the config keys of the same name. */
export const SettingsFileSchema = T.Object(LayeredKeys, { additionalProperties: false });

let validate: ValidateFunction | undefined;

function check(value: unknown, file: string): UserSettings {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ConfigError(`${file}: the settings must be a JSON object`);
  }
  if (!validate) {
    const { Ajv } = loadAjv();
    validate = new Ajv({ allErrors: false, strict: false }).compile(SettingsFileSchema);
  }
  if (!validate(value)) throw new ConfigError(`${file}: ${describeConfigError(validate.errors?.[0])}`);
  return value as UserSettings;
}

/**
 * Reads `<home>/settings.json`. Missing: no settings. Broken JSON or an invalid key: a ConfigError naming the
 * file and the key (the daemon refuses to start rather than silently resetting what the user chose).
 */
export function readSettingsFile(home: string): UserSettings {
  const file = join(home, SETTINGS_FILE);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new ConfigError(`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  return parse(text, file);
}

/** Environment variables that override a layered key. */
const ENV_OF: Partial<Record<LayeredKey, string>> = {
  "provider.baseURL": "OPENAI_BASE_URL",
  "provider.apiKey": "OPENAI_API_KEY",
  "provider.model": "AGENTD_MODEL",
};

type Layer = Record<LayeredKey, unknown>;

function flatten(v: {
  provider?: { baseURL?: unknown; apiKey?: unknown; model?: unknown };
  defaultPersona?: unknown;
  maxTurnIterations?: unknown;
  permissionMode?: unknown;
  theme?: unknown;
  reasoning?: unknown;
}): Layer {
  return {
    "provider.baseURL": v.provider?.baseURL,
    "provider.apiKey": v.provider?.apiKey,
    "provider.model": v.provider?.model,
    defaultPersona: v.defaultPersona,
    maxTurnIterations: v.maxTurnIterations,
    permissionMode: v.permissionMode,
    theme: v.theme,
    reasoning: v.reasoning,
  };
}

const DEFAULTS: Layer = {
  "provider.baseURL": undefined,
  "provider.apiKey": undefined,
  "provider.model": undefined,
  defaultPersona: "default",
  maxTurnIterations: DEFAULT_TURN_CAP,
  permissionMode: "default",
  theme: undefined,
  reasoning: undefined,
};

function applyPatch(current: UserSettings, patch: UserSettingsPatch): UserSettings {
  const next: Record<string, unknown> = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (k === "provider") continue;
    if (v === null) delete next[k];
    else if (v !== undefined) next[k] = v;
  }
  if (patch.provider) {
    const provider: Record<string, unknown> = { ...current.provider };
    for (const [k, v] of Object.entries(patch.provider)) {
      if (v === null) delete provider[k];
      else if (v !== undefined) provider[k] = v;
    }
    if (Object.keys(provider).length) next.provider = provider;
    else delete next.provider;
  }
  return next as UserSettings;
}

/**
 * The daemon's settings, layered: built-in defaults < the config file < `<home>/settings.json` < environment
 * variables. Reads are live; `update` validates, writes the file atomically (0600) and swaps the in-memory copy in
 * one synchronous step, so concurrent requests are serialised and none of their changes is lost.
 */
export class LayeredSettings implements DaemonSettings {
  readonly home: string;
  readonly version: string;
  defaultCwd: string;
  raw: Record<string, unknown>;
  private user: UserSettings;
  private readonly configLayer: Layer;
  private readonly envLayer: Layer;
  private readonly file: string;
  /** Where the user's settings are kept: `<home>/settings.json`, or a shared database once attached. */
  private documents: DocumentStore;
  /** How messages name the settings: the file's path, or `settings.json` in a database. */
  private where: string;
  private unwatch: Disposable | undefined;

  constructor(opts: {
    home: string;
    version: string;
    config: GlobalConfig;
    env: NodeJS.ProcessEnv;
    defaultCwd: string;
    user: UserSettings;
  }) {
    this.home = opts.home;
    this.version = opts.version;
    this.defaultCwd = opts.defaultCwd;
    this.raw = opts.config as Record<string, unknown>;
    this.user = opts.user;
    this.file = join(opts.home, SETTINGS_FILE);
    this.documents = new FileDocuments(opts.home);
    this.where = this.file;
    const cfg = opts.config;
    const pluginTheme = (cfg.pluginOptions?.settings as { theme?: unknown } | undefined)?.theme;
    this.configLayer = flatten({ ...cfg, theme: cfg.theme ?? pluginTheme });
    const env = opts.env;
    this.envLayer = flatten({
      provider: {
        baseURL: env.OPENAI_BASE_URL || undefined,
        apiKey: env.OPENAI_API_KEY || undefined,
        model: env.AGENTD_MODEL || undefined,
      },
    });
  }

  private resolve(key: LayeredKey): { value: unknown; source: SettingSource } {
    const env = this.envLayer[key];
    if (env !== undefined) return { value: env, source: "env" };
    const user = flatten(this.user)[key];
    if (user !== undefined) return { value: user, source: "settings" };
    const cfg = this.configLayer[key];
    if (cfg !== undefined) return { value: cfg, source: "config" };
    return { value: DEFAULTS[key], source: "default" };
  }

  private value<V>(key: LayeredKey): V {
    return this.resolve(key).value as V;
  }

  get provider(): { baseURL?: string; apiKey?: string; model?: string } {
    const p: { baseURL?: string; apiKey?: string; model?: string } = {};
    const baseURL = this.value<string | undefined>("provider.baseURL");
    const apiKey = this.value<string | undefined>("provider.apiKey");
    const model = this.value<string | undefined>("provider.model");
    if (baseURL !== undefined) p.baseURL = baseURL;
    if (apiKey !== undefined) p.apiKey = apiKey;
    if (model !== undefined) p.model = model;
    return p;
  }

  get defaultPersona(): string {
    return this.value<string>("defaultPersona");
  }

  get maxTurnIterations(): number {
    return this.value<number>("maxTurnIterations");
  }

  get permissionMode(): PermissionMode {
    return this.value<PermissionMode>("permissionMode");
  }

  get theme(): string | undefined {
    return this.value<string | undefined>("theme");
  }

  get reasoning(): string | undefined {
    return this.value<string | undefined>("reasoning");
  }

  layers(): Record<LayeredKey, { value?: unknown; source: SettingSource }> {
    const out = {} as Record<LayeredKey, { value?: unknown; source: SettingSource }>;
    for (const key of LAYERED_KEYS) {
      const { value, source } = this.resolve(key);
      out[key] = key === "provider.apiKey" || value === undefined ? { source } : { value, source };
    }
    return out;
  }

  envOverrides(): LayeredKey[] {
    return LAYERED_KEYS.filter((k) => ENV_OF[k] !== undefined && this.envLayer[k] !== undefined);
  }

  /** The settings file's own content (what `update` starts from). */
  stored(): UserSettings {
    return structuredClone(this.user);
  }

  /**
   * Keeps the user's settings in `documents` from now on (a database several daemons share): reads them, and reads
   * them again whenever another daemon changes them. A stored value that is not valid stops the start with its reason.
   */
  async attachDocuments(documents: DocumentStore): Promise<void> {
    this.documents = documents;
    this.where = SETTINGS_FILE;
    const load = async () => {
      const text = await documents.read(SETTINGS_FILE);
      this.user = text === undefined ? {} : parse(text, `${documents.where} ${SETTINGS_FILE}`);
    };
    await load();
    this.unwatch = documents.watch?.((name) => {
      if (name === undefined || name === SETTINGS_FILE) load().catch(() => {}); // an invalid change keeps the values in use
    });
  }

  /** Stops following another daemon's changes. */
  close(): void {
    this.unwatch?.dispose();
  }

  /**
   * Applies `patch` to the stored settings (as they are now, also when another daemon changed them), validated,
   * one change at a time, then uses the result. A write that fails changes nothing.
   */
  async update(patch: UserSettingsPatch): Promise<void> {
    const where = this.where;
    const edit = (current: string | undefined): string => {
      const base = current === undefined ? {} : parse(current, where);
      try {
        return `${JSON.stringify(check(applyPatch(base, patch), where), null, 2)}\n`;
      } catch (err) {
        throw ApiError.badRequest((err as Error).message.replace(`${where}: `, "settings: "));
      }
    };
    let text: string | undefined;
    try {
      text = await this.documents.update(SETTINGS_FILE, edit);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      // Nothing changed (the old document and the in-memory values stay); say why rather than a bare 500.
      throw new ApiError(
        500,
        `Could not save ${SETTINGS_FILE}: ${(err as NodeJS.ErrnoException).code ?? "write failed"}`,
      );
    }
    this.user = text === undefined ? {} : parse(text, where);
  }
}

function parse(text: string, where: string): UserSettings {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${where}: not valid JSON (${(err as Error).message}); fix or remove the file`);
  }
  return check(parsed, where);
}
