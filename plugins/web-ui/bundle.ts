import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Written by scripts/build-web.ts next to the bundle. */
export interface WebManifest {
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

export const TYPES: Record<string, string> = {
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

export function page(m: WebManifest): string {
  const css = m.entry.css ? `<link rel="stylesheet" href="/assets/${m.entry.css}">` : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1,viewport-fit=cover">
<meta name="color-scheme" content="light dark">
<title>agentd</title><link rel="icon" href="data:,">${css}
<script type="module" src="/assets/${m.entry.js}"></script>
</head><body><div id="app"></div><noscript>The agentd web UI needs JavaScript.</noscript></body></html>`;
}

/** The built UI, read on first use: its manifest and its assets by file name. */
export interface WebBundle {
  /** Throws when the UI is not built. */
  load(): WebManifest;
  assets: Map<string, Buffer>;
}

export function webBundle(): WebBundle {
  let manifest: WebManifest | undefined;
  const assets = new Map<string, Buffer>();
  const load = (): WebManifest => {
    if (manifest) return manifest;
    const m = JSON.parse(readFileSync(join(WEB_DIR, "manifest.json"), "utf8")) as WebManifest;
    for (const f of m.files) assets.set(f, readFileSync(join(WEB_DIR, f)));
    manifest = m;
    return m;
  };
  return { load, assets };
}
