import { readFileSync } from "node:fs";
import { CAPABILITIES, type Capability, isCapability, type PluginManifest } from "../../core/plugin.js";

const ID_RE = /^[a-z0-9][a-z0-9-]{0,63}$/;

export interface PackageInfo {
  name: string;
  version: string;
  manifest: PluginManifest & { capabilities: Capability[] };
}

/**
 * Reads a plugin package's package.json and checks its `agentd` manifest without running its code: a kebab-case
 * id, a version and description, known capability names. Throws one message listing every problem.
 */
export function readPluginPackage(pkgFile: string): PackageInfo {
  let pkg: { name?: unknown; version?: unknown; agentd?: unknown };
  try {
    pkg = JSON.parse(readFileSync(pkgFile, "utf8"));
  } catch (err) {
    throw new Error(`cannot read ${pkgFile}: ${(err as Error).message}`);
  }
  const m = pkg.agentd as Record<string, unknown> | undefined;
  if (!m || typeof m !== "object" || Array.isArray(m)) {
    throw new Error(`${pkgFile} has no "agentd" manifest: this is not an agentd plugin`);
  }
  const problems: string[] = [];
  if (typeof m.id !== "string" || !ID_RE.test(m.id))
    problems.push(`"id" must be kebab-case (got ${JSON.stringify(m.id)})`);
  if (typeof m.version !== "string" || !m.version) problems.push(`"version" must be a string`);
  if (typeof m.description !== "string") problems.push(`"description" must be a string`);
  const caps = m.capabilities ?? [];
  if (!Array.isArray(caps)) problems.push(`"capabilities" must be an array`);
  else {
    for (const c of caps) {
      if (!isCapability(c)) {
        problems.push(`unknown capability ${JSON.stringify(c)} (known: ${Object.keys(CAPABILITIES).join(", ")})`);
      }
    }
  }
  for (const key of ["requires", "provides"] as const) {
    const v = m[key];
    if (v !== undefined && (!Array.isArray(v) || v.some((x) => typeof x !== "string"))) {
      problems.push(`"${key}" must be an array of strings`);
    }
  }
  if (m.configSchema !== undefined && (typeof m.configSchema !== "object" || m.configSchema === null)) {
    problems.push(`"configSchema" must be a JSON Schema object`);
  }
  if (problems.length) throw new Error(`invalid agentd manifest in ${pkgFile}: ${problems.join("; ")}`);
  return {
    name: typeof pkg.name === "string" ? pkg.name : String(m.id),
    version: typeof pkg.version === "string" ? pkg.version : String(m.version),
    manifest: { ...(m as unknown as PluginManifest), capabilities: caps as Capability[] },
  };
}

/** One line per capability: its name and what it allows. */
export function describeCapabilities(caps: readonly Capability[]): string {
  if (!caps.length) return "  (no capabilities)";
  return caps.map((c) => `  ${c.padEnd(14)} ${CAPABILITIES[c]}`).join("\n");
}
