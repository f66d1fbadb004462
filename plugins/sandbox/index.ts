import { accessSync, constants } from "node:fs";
import path from "node:path";
import {
  commandEnv,
  definePlugin,
  HostInfoToken,
  isInside,
  type NetworkPolicy,
  type PluginContext,
  type Sandbox,
  type SandboxConfig,
  type SandboxRequest,
  type SandboxStatus,
  SandboxToken,
} from "../../core/index.js";
import { bwrapArgs, confinementOf } from "./bwrap.js";
import { expandHome, isHiddenPath, real } from "./paths.js";
import { probeSandbox } from "./probe.js";

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `AGENTD_BWRAP`, else `bwrap` on PATH; a reason when there is none. */
function findBwrap(): { file?: string; reason?: string } {
  const configured = process.env.AGENTD_BWRAP;
  if (configured) {
    return executable(configured)
      ? { file: configured }
      : { reason: `bwrap not found at ${configured} (AGENTD_BWRAP)` };
  }
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir && executable(path.join(dir, "bwrap"))) return { file: path.join(dir, "bwrap") };
  }
  return { reason: "bwrap (Debian package bubblewrap) is not installed" };
}

/**
 * The sandbox of the agent's processes (bash, background tasks, project hooks, project MCP servers): bubblewrap on
 * Linux, proven by a self-check at start. Where it cannot work it says why, and the shell asks before every command
 * (fail closed); only the config value `sandbox: "off"` runs commands unconfined without asking.
 */
export default definePlugin({
  manifest: {
    id: "sandbox",
    version: "1.0.0",
    description: "Confines the agent's processes with bubblewrap: files, secrets, network, processes",
    capabilities: ["process"],
    provides: [SandboxToken.id],
  },
  deps: { host: HostInfoToken },
  register(ctx) {
    const config = (ctx.deps.host.config("sandbox") ?? {}) as SandboxConfig;
    const off = config === "off";
    const opts = off ? {} : config;
    const globalNetwork: NetworkPolicy = opts.network ?? "ask";
    const confinement = confinementOf(ctx.home, opts);
    const projects = Object.entries(opts.projects ?? {}).map(([dir, p]) => ({ dir: real(expandHome(dir)), ...p }));
    const found = off
      ? {}
      : process.platform === "linux"
        ? findBwrap()
        : { reason: `not available on ${process.platform} yet` };
    const base = { network: globalNetwork, writable: [...confinement.writable] };
    let current: SandboxStatus = off
      ? { ...base, enabled: false, kind: "off" }
      : found.file
        ? { ...base, enabled: false, kind: "bubblewrap", reason: "checking" }
        : { ...base, enabled: false, kind: "none", reason: found.reason };
    const unconfined = (reason: string) => {
      ctx.log.warn({ reason }, "sandbox: commands cannot be confined; each one is asked about");
    };
    const selfCheck = async (): Promise<SandboxStatus> => {
      if (!found.file) {
        if (!off) unconfined(current.reason ?? "unavailable");
        return current;
      }
      const reason = await probeSandbox(found.file, confinement, ctx.home).catch(
        (err: Error) => `self-check failed: ${err.message}`,
      );
      current = reason
        ? { ...base, enabled: false, kind: "none", reason }
        : { ...base, enabled: true, kind: "bubblewrap" };
      if (reason) unconfined(reason);
      else ctx.log.info({ bwrap: found.file, network: current.network }, "sandbox: commands run confined (bubblewrap)");
      return current;
    };
    // Run once, from start() or from the first command that comes before it; commands wait for the outcome.
    let checked: Promise<SandboxStatus> | undefined;
    const ready = () => {
      checked ??= selfCheck();
      return checked;
    };
    selfChecks.set(ctx, ready);
    const allow = opts.env ?? [];
    const sandbox: Sandbox = {
      ready,
      status: () => current,
      networkPolicy(cwd) {
        const dir = real(cwd);
        const match = projects
          .filter((p) => p.network && isInside(p.dir, dir))
          .sort((a, b) => b.dir.length - a.dir.length)[0];
        return match?.network ?? globalNetwork;
      },
      env: (env = process.env) => commandEnv(env, allow),
      wrap(req: SandboxRequest) {
        if (!current.enabled || !found.file) {
          return { file: req.argv[0], args: req.argv.slice(1), env: req.env, confined: false };
        }
        return { file: found.file, args: bwrapArgs(confinement, req), env: req.env, confined: true };
      },
      isHidden: (abs, cwd) => isHiddenPath(confinement.hidden, abs, cwd),
    };
    ctx.services.provide(SandboxToken, Object.freeze(sandbox));
  },
  start(ctx) {
    // Not awaited, and not during the start: its spawn forks the daemon on the event loop and its bwrap and bash take
    // the other CPU, which put ~20 ms on a client's first answer (docs/benchmarks.md, issue 27). It runs half a second
    // after the start instead; a command that comes first starts it at once and waits for the outcome (fail closed).
    const timer = setTimeout(() => void selfChecks.get(ctx)?.(), SELF_CHECK_AFTER_MS);
    timer.unref();
    ctx.onDispose(() => clearTimeout(timer));
  },
});

/** How long after the start the self-check runs when no command asked for it first. */
const SELF_CHECK_AFTER_MS = 500;

/** The plugin object is shared by every daemon in the process; its self-check belongs to one registration. */
const selfChecks = new WeakMap<PluginContext, () => Promise<SandboxStatus>>();
