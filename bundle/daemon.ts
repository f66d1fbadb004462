/**
 * What the compiled CLI's `agentd serve` loads (host/main.ts; the built launcher, scripts/bundle-launcher.ts, loads the
 * bundle's runtime itself): like `bundle/sdk.ts`, a re-export that `npm run build` replaces with the bundle's entry,
 * so the daemon starts from a few files instead of ~600 modules and shares them with `agentd`.
 */
export { ConfigError } from "../host/config.js";
export { DaemonStartError, startDaemon } from "../host/daemon.js";
export { loginLink } from "../host/http/auth.js";
export { FatalPluginError } from "../host/loader.js";
