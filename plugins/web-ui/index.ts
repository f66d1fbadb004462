import { definePlugin } from "../../core/index.js";
import { webBundle } from "./bundle.js";
import { webUiRoutes } from "./routes/index.js";

export { WEB_UI_CSP } from "./bundle.js";

/**
 * The bundled web UI: the page at `/` (signed-in browsers; the host sends others to /login) and its content-hashed
 * assets, built by esbuild from clients/web. It talks to the daemon through /api/v1 only.
 */
export default definePlugin({
  manifest: {
    id: "web-ui",
    version: "1.0.0",
    description: "The bundled web UI at /",
    capabilities: ["routes", "pages"],
  },
  deps: {},
  register(ctx) {
    for (const r of webUiRoutes(webBundle())) ctx.routes.add(r);
  },
});
