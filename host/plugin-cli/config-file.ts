import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writePrivateFile } from "../../core/files.js";
import { ConfigError, type GlobalConfig, validateConfig } from "../config.js";

const OTHER_FORMATS = ["config.yaml", "config.yml", "config.mjs", "config.js", "config.cjs"];

/** The JSON config file the plugin commands edit (`<home>/config.json`; created when there is no config). */
export function configPath(home: string): string {
  return join(home, "config.json");
}

export function readConfig(home: string): GlobalConfig {
  const file = configPath(home);
  if (!existsSync(file)) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new ConfigError(`${file}: ${(err as Error).message}`);
  }
  return validateConfig(raw, file);
}

/**
 * Applies `change` to `<home>/config.json`, validates the result and replaces the file atomically. A config kept in
 * another format (YAML, JS) is not rewritten: the error says what to add by hand.
 */
export function updateConfig(home: string, change: (cfg: GlobalConfig) => void, byHand: string): GlobalConfig {
  const other = OTHER_FORMATS.find((name) => existsSync(join(home, name)));
  if (other && !existsSync(configPath(home))) {
    throw new ConfigError(`the config is ${join(home, other)}, which agentd does not rewrite: ${byHand}`);
  }
  const cfg = structuredClone(readConfig(home));
  change(cfg);
  const file = configPath(home);
  validateConfig(cfg, file);
  writePrivateFile(file, `${JSON.stringify(cfg, null, 2)}\n`);
  return cfg;
}
