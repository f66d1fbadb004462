import { ProjectResourcesSchema, scanProjectPlugins, T } from "../../../core/index.js";
import type { ProjectResources } from "../context.js";
import { hasAny } from "../scan.js";
import type { TrustStore } from "../trust.js";
import { resourceNames } from "../trust-prompt.js";

/** What the project routes use. */
export interface ProjectRouteDeps {
  trust: TrustStore;
  resources: ProjectResources;
  reload: () => Promise<void>;
}

export const CwdSchema = T.String({
  minLength: 1,
  maxLength: 4096,
  description: "An absolute, existing directory; its project is the git top level, else the directory itself",
});

export const ProjectTrustSchema = T.Object(
  {
    path: T.String({ description: "The project root" }),
    trusted: T.Boolean(),
    decidedAt: T.Union([T.String({ format: "date-time" }), T.Null()], {
      description: "When the decision was made; null when never decided (untrusted)",
    }),
    hasLocalResources: T.Boolean(),
    resources: ProjectResourcesSchema,
    problems: T.Array(T.String(), { description: "Project files that were skipped, and why" }),
  },
  { title: "ProjectTrust" },
);

/** The trust status and local resources of the project containing `cwd` (an existing directory). */
export function trustStatus(trust: TrustStore, resources: ProjectResources, dir: string) {
  const view = resources.view(dir);
  const local = view.local;
  const decision = trust.decision(view.root);
  const plugins = scanProjectPlugins(view.root, { forDisplay: true });
  return {
    path: view.root,
    trusted: decision?.trusted === true,
    decidedAt: decision?.decidedAt || null,
    hasLocalResources: hasAny(local) || plugins.length > 0,
    resources: resourceNames(local, plugins, trust.pins(view.root)),
    problems: local.problems,
  };
}
