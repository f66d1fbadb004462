/*
 * Which engine the file searches (the grep and glob tools, the session file search) run on: ripgrep when it can be
 * found, else the JavaScript walk in this folder, which gives the same results, only slower.
 * - `AGENTD_RIPGREP=/path/to/rg` uses that binary; `AGENTD_RIPGREP=off` forces the JavaScript engine;
 * - otherwise `rg` is looked up on PATH (Debian's `ripgrep` package installs /usr/bin/rg). Nothing is downloaded.
 * The lookup runs once per process (the first search, or the first GET /server/status).
 */
import { execFile } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";

export type SearchEngineName = "ripgrep" | "javascript";

export interface SearchEngineInfo {
  engine: SearchEngineName;
  /** The ripgrep binary in use. */
  path?: string;
  /** Its version ("13.0.0"), once known. */
  version?: string;
  /** Why ripgrep is not used (not found, turned off, not executable). */
  reason?: string;
}

export const RIPGREP_ENV = "AGENTD_RIPGREP";

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function locate(): SearchEngineInfo {
  const configured = process.env[RIPGREP_ENV]?.trim();
  if (configured && ["off", "none", "0", "false"].includes(configured.toLowerCase())) {
    return { engine: "javascript", reason: `${RIPGREP_ENV}=${configured}` };
  }
  if (configured) {
    const file = path.resolve(configured);
    return executable(file)
      ? { engine: "ripgrep", path: file }
      : { engine: "javascript", reason: `${RIPGREP_ENV} (${configured}) is not an executable file` };
  }
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, "rg");
    if (executable(file)) return { engine: "ripgrep", path: file };
  }
  return { engine: "javascript", reason: "rg was not found on PATH" };
}

let current: SearchEngineInfo | undefined;
let versionAsked = false;

/** The engine in use (looked up on the first call). */
export function searchEngine(): SearchEngineInfo {
  current ??= locate();
  if (current.engine === "ripgrep" && current.path && !versionAsked) {
    versionAsked = true;
    const info = current;
    execFile(info.path as string, ["--version"], { timeout: 5000 }, (err, stdout) => {
      const v = /ripgrep (\S+)/.exec(String(stdout));
      if (!err && v?.[1]) info.version = v[1];
    });
  }
  return current;
}

/** Forgets the lookup (tests switch engines through the environment). */
export function resetSearchEngine(): void {
  current = undefined;
  versionAsked = false;
}
