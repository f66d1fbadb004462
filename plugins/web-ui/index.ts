import { existsSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { ApiError, definePlugin, defineRoute, T } from "../../core/index.js";

/** Written by scripts/build-web.ts next to the bundle. */
interface WebManifest {
  entry: { js: string; css?: string };
  files: string[];
}

/** Scripts and styles only from this origin, requests only to it: model output can never run or phone home. */
export const WEB_UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  // Only the share dialog's preview of the shared page (served by this daemon).
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".svg": "image/svg+xml",
  ".woff2": "font/woff2",
};

/** dist/web, seen from dist/plugins/web-ui/index.js or from a chunk of the bundle in dist/bundle/. */
const WEB_DIR =
  [join(import.meta.dirname, "../../web"), join(import.meta.dirname, "../web")].find((d) =>
    existsSync(join(d, "manifest.json")),
  ) ?? join(import.meta.dirname, "../../web");

function page(m: WebManifest): string {
  const css = m.entry.css ? `<link rel="stylesheet" href="/assets/${m.entry.css}">` : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1,viewport-fit=cover">
<meta name="color-scheme" content="light dark">
<title>agentd</title><link rel="icon" href="data:,">${css}
<script type="module" src="/assets/${m.entry.js}"></script>
</head><body><div id="app"></div><noscript>The agentd web UI needs JavaScript.</noscript></body></html>`;
}

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
    let manifest: WebManifest | undefined;
    const assets = new Map<string, Buffer>();
    const load = (): WebManifest => {
      if (manifest) return manifest;
      const m = JSON.parse(readFileSync(join(WEB_DIR, "manifest.json"), "utf8")) as WebManifest;
      for (const f of m.files) assets.set(f, readFileSync(join(WEB_DIR, f)));
      manifest = m;
      return m;
    };
    ctx.routes.add(
      defineRoute({
        method: "GET",
        path: "/",
        page: true,
        operationId: "webUiPage",
        summary: "The web UI",
        responses: { 200: { description: "HTML page", contentType: "text/html", schema: T.String() } },
        handler: () => {
          let m: WebManifest;
          try {
            m = load();
          } catch {
            throw new ApiError(503, "The web UI is not built (run `npm run build`)");
          }
          return { html: page(m), headers: { "Content-Security-Policy": WEB_UI_CSP } };
        },
      }),
    );
    ctx.routes.add(
      defineRoute({
        method: "GET",
        path: "/assets/:file",
        page: true,
        operationId: "webUiAsset",
        summary: "A content-hashed asset of the web UI",
        params: T.Object({ file: T.String({ pattern: "^[A-Za-z0-9._-]{1,200}$" }) }),
        responses: { 200: { description: "The file", contentType: "application/octet-stream", schema: T.String() } },
        handler: ({ params }) => {
          try {
            load();
          } catch {
            throw new ApiError(503, "The web UI is not built (run `npm run build`)");
          }
          const bytes = assets.get(params.file);
          if (!bytes) throw ApiError.notFound("No such asset");
          return {
            bytes,
            contentType: TYPES[extname(params.file)] ?? "application/octet-stream",
            headers: {
              "Cache-Control": "private, max-age=31536000, immutable",
              "Content-Security-Policy": WEB_UI_CSP,
            },
          };
        },
      }),
    );
  },
});
