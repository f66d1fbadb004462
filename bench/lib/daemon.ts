import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Daemon, startDaemon } from "../../host/daemon.js";
import type { PluginSource } from "../../host/plugin-sources.js";
import { ApiClient } from "../../testing/daemon.js";
import { now } from "./clock.js";

/** The `agentd` command as installed (package.json "bin"): what a user spawns. */
export const AGENTD_BIN = fileURLToPath(new URL("../../host/agentd.cjs", import.meta.url));

export interface BenchDaemon {
  daemon: Daemon;
  api: ApiClient;
  home: string;
  /** startDaemon() until it listens and has written server.json. */
  bootMs: number;
  cleanup(): Promise<void>;
}

const temps: string[] = [];

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/** Removes every temporary directory of the run, at the end (a daemon home may be removed right after stop()). */
export async function removeTempDirs(): Promise<void> {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** The process environment without AGENTD_* / OPENAI_* (as the test harness does), plus `extra`. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith("AGENTD_") && !k.startsWith("OPENAI_")) env[k] = v;
  }
  return { ...env, AGENTD_LOG_LEVEL: "warn", ...extra };
}

/**
 * The real daemon in this process, like `startTestDaemon` but without its response-schema validation (a test-only
 * check that production does not run), so the figures are the production code path.
 */
export async function bootDaemon(
  opts: {
    providerUrl?: string;
    builtins?: PluginSource[];
    validateResponses?: boolean;
    home?: string;
    /** More environment, e.g. AGENTD_DATABASE_URL. */
    env?: Record<string, string>;
  } = {},
): Promise<BenchDaemon> {
  const home = opts.home ?? tempDir("agentd-bench-");
  const env: Record<string, string> = {
    ...(opts.providerUrl
      ? { OPENAI_BASE_URL: opts.providerUrl, OPENAI_API_KEY: "bench-key", AGENTD_MODEL: "fake-model" }
      : {}),
    ...opts.env,
  };
  const t0 = now();
  const daemon = await startDaemon({
    home,
    host: "127.0.0.1",
    port: 0,
    env: cleanEnv(env),
    builtins: opts.builtins,
    validateResponses: opts.validateResponses ?? false,
  });
  const bootMs = now() - t0;
  return {
    daemon,
    api: new ApiClient(daemon.url, daemon.info.token),
    home,
    bootMs,
    async cleanup() {
      await daemon.stop();
    },
  };
}
