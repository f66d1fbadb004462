import { commandEnv, type Sandbox } from "../../core/index.js";
import type { ShellServices } from "../../plugins/tools-shell/tools.js";

/**
 * The bash tool as with config `sandbox: "off"` and no rules: for unit tests of the tool's process handling
 * (output, timeouts, background tasks). Confinement itself is tested against the real daemon and bubblewrap.
 */
export const SANDBOX_OFF: Sandbox = {
  ready: async () => SANDBOX_OFF.status(),
  status: () => ({ enabled: false, kind: "off", network: "allow", writable: [] }),
  networkPolicy: () => "allow",
  wrap: (req) => ({ file: req.argv[0], args: req.argv.slice(1), env: req.env, confined: false }),
  env: (env = process.env) => commandEnv(env),
  isHidden: () => false,
};

export const UNCONFINED_SHELL: ShellServices = { sandbox: () => SANDBOX_OFF, rules: () => undefined };
