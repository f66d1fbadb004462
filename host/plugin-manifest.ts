import { isDeepStrictEqual } from "node:util";
import { type Plugin, type PluginDefinition, type PluginManifest, requiredDeps } from "../core/plugin.js";

/** The fields a third-party plugin's code may still state, and must then state as its package.json does. */
const COMPARED = ["id", "version", "description", "capabilities", "requires", "provides", "startTimeoutMs"] as const;

/**
 * The plugin as it runs: its code with the manifest the host read before importing it (package.json's `agentd` key
 * for a third-party plugin, the code's own for a built-in one), completed from the code: the options schema
 * (`options`, else a `configSchema` in code, else package.json's) and the services its `deps` require. A third-party
 * plugin whose code still states a manifest must agree with package.json in each field both state; a mismatch throws,
 * naming the fields.
 */
export function attachManifest(code: PluginDefinition, declared: PluginManifest): Plugin {
  const fromDeps = requiredDeps(code);
  const codeSchema = code.options ?? code.manifest?.configSchema;
  if (code.manifest !== declared) {
    const diffs = code.manifest ? differences(code.manifest, declared, fromDeps) : [];
    if (codeSchema && declared.configSchema && !isDeepStrictEqual(plain(codeSchema), plain(declared.configSchema))) {
      diffs.push("configSchema (the options schema)");
    }
    if (diffs.length) {
      throw new Error(
        `the manifest in its code differs from package.json's "agentd" key in ${diffs.join(", ")}: package.json ` +
          "holds the manifest, so leave it out of definePlugin (give the options schema as `options`)",
      );
    }
  }
  const requires = [...new Set([...(declared.requires ?? []), ...fromDeps])];
  const manifest: PluginManifest = { ...declared };
  if (requires.length) manifest.requires = requires;
  const configSchema = codeSchema ?? declared.configSchema;
  if (configSchema) manifest.configSchema = configSchema;
  return { ...code, manifest };
}

function differences(code: PluginManifest, pkg: PluginManifest, fromDeps: string[]): string[] {
  const out: string[] = [];
  for (const key of COMPARED) {
    // A field only one of them states is no contradiction (package.json's, or its absence, holds).
    if (code[key] === undefined || pkg[key] === undefined) continue;
    let a: unknown = code[key];
    let b: unknown = pkg[key];
    // Lists are sets; `requires` also holds what the deps require, stated or not.
    if (key === "capabilities" || key === "provides" || key === "requires") {
      const extra = key === "requires" ? fromDeps : [];
      a = [...new Set([...((a as string[] | undefined) ?? []), ...extra])].sort();
      b = [...new Set([...((b as string[] | undefined) ?? []), ...extra])].sort();
    }
    if (!isDeepStrictEqual(a, b)) out.push(`${key} (${JSON.stringify(a)} in the code, ${JSON.stringify(b)} there)`);
  }
  return out;
}

/** A schema as JSON (TypeBox marks its schemas with symbol keys, which package.json cannot hold). */
function plain(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v));
}
