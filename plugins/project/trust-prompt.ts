import {
  type ProjectPluginInfo,
  type ProjectResourceNames,
  type ProjectTrustPrompt,
  pluginState,
  scanProjectPlugins,
} from "../../core/index.js";
import { describeHook } from "./hooks.js";
import { hasAny, type Resources } from "./scan.js";

/** The decisions and the resources a trust prompt is made of (the trust store and the project's scan). */
export interface PromptSources {
  trust: {
    projectRoot(cwd: string): string;
    decision(cwd: string): { trusted: boolean } | undefined;
    pins(cwd: string): Record<string, string> | undefined;
  };
  projectResources(root: string): Resources;
}

/** What a project would load, by kind (the shape of the trust prompt and of `project_trust_required`). */
export function resourceNames(
  local: Resources,
  plugins: ProjectPluginInfo[] = [],
  pins?: Record<string, string>,
): ProjectResourceNames {
  return {
    plugins: plugins.map((p) => ({ name: p.name, hash: p.hash, state: pluginState(p, pins) })),
    personas: local.personas.map((p) => p.name),
    skills: local.skills.map((s) => s.name),
    rules: local.rules.map((r) => r.name),
    contextFiles: local.contextFiles.map((c) => c.name),
    mcp: local.mcp,
    hooks: local.hooks.map(describeHook),
    ssh: local.ssh,
  };
}

/**
 * The trust prompt of the project containing `cwd`: while it is undecided and has local resources (plugins
 * included), or while it is trusted but a project plugin is new or changed since trust was given.
 */
export function trustPrompt(
  trust: PromptSources["trust"],
  resources: Pick<PromptSources, "projectResources">,
  cwd: string,
): ProjectTrustPrompt | undefined {
  const root = trust.projectRoot(cwd);
  const decision = trust.decision(root);
  if (decision && !decision.trusted) return undefined;
  const plugins = scanProjectPlugins(root, { forDisplay: true });
  const pins = trust.pins(root);
  if (decision && plugins.every((p) => pluginState(p, pins) === "trusted")) return undefined;
  const local = resources.projectResources(root);
  if (!hasAny(local) && plugins.length === 0) return undefined;
  return { required: true, path: root, resources: resourceNames(local, plugins, pins) };
}
