/**
 * Bundles the browser app (clients/web) with esbuild into dist/web: content-hashed file names (served with
 * year-long cache headers) and a manifest the web-ui plugin reads to write the page. Part of `npm run build`.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { build } from "esbuild";

const root = resolve(import.meta.dirname, "../..");
const outdir = join(root, "dist/web");

export interface WebManifest {
  /** The entry script and stylesheet of the page, and every file that may be requested under /assets/. */
  entry: { js: string; css?: string };
  files: string[];
}

async function main(): Promise<void> {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    entryPoints: [join(root, "clients/web/main.tsx")],
    outdir,
    bundle: true,
    format: "esm",
    splitting: true,
    minify: true,
    sourcemap: "linked",
    target: ["chrome111", "firefox114", "safari16.4"],
    entryNames: "[name]-[hash]",
    chunkNames: "chunk-[hash]",
    assetNames: "[name]-[hash]",
    jsx: "automatic",
    jsxImportSource: "preact",
    tsconfig: join(root, "clients/web/tsconfig.json"),
    metafile: true,
    legalComments: "linked",
    logLevel: "warning",
  });
  const files = Object.keys(result.metafile.outputs).map((f) => basename(f));
  let js = "";
  let css: string | undefined;
  for (const [file, meta] of Object.entries(result.metafile.outputs)) {
    if (meta.entryPoint?.endsWith("clients/web/main.tsx") && file.endsWith(".js")) {
      js = basename(file);
      if (meta.cssBundle) css = basename(meta.cssBundle);
    }
  }
  if (!js) throw new Error("esbuild produced no entry script");
  const manifest: WebManifest = { entry: { js, css }, files };
  writeFileSync(join(outdir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`build-web: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
