/**
 * `import()` of a module by its URL or package name: a plugin's entry, a test store, the MCP SDK. The bundled daemon
 * runs as a script that node:vm compiled with its V8 code cache (`dist/bundle/runtime.cjs`, host/code-cache.ts),
 * where `import()` fails (node's loader for such scripts is experimental, warns, and is lost once V8 takes the
 * cache); the bundle's loader, an ES module in the same directory, sets its own `import` here before the daemon runs
 * (scripts/bundle.ts). The compiled modules keep this one. A package name resolves from either to node_modules.
 */
let importer: (url: string) => Promise<unknown> = (url) => import(url);

export function importModule<T>(url: string): Promise<T> {
  return importer(url) as Promise<T>;
}

export function setModuleImporter(f: (url: string) => Promise<unknown>): void {
  importer = f;
}
