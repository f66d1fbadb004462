import {
  defineRoute,
  OkSchema,
  ProjectResourcesSchema,
  scanProjectPlugins,
  T,
  type TrustRecord,
} from "../../core/index.js";
import type { ProjectResources } from "./context.js";
import { requireDirectory } from "./paths.js";
import { hasAny } from "./scan.js";
import type { TrustStore } from "./trust.js";
import { resourceNames } from "./trust-prompt.js";

const CwdSchema = T.String({
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

const TrustRecordSchema = T.Object(
  { path: T.String(), trusted: T.Boolean(), decidedAt: T.String({ format: "date-time" }) },
  { title: "ProjectTrustRecord" },
);

const TrustQuery = T.Object({ cwd: CwdSchema });
const TrustBody = T.Object({ cwd: CwdSchema, trusted: T.Boolean() }, { additionalProperties: false });

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

/** `reload` re-scans the resources and announces the sessions whose trust prompt appeared or went away. */
export function projectRoutes(trust: TrustStore, resources: ProjectResources, reload: () => Promise<void>) {
  return [
    defineRoute({
      method: "GET",
      path: "/projects",
      operationId: "listProjectTrust",
      summary: "Projects with a trust decision",
      tags: ["projects"],
      responses: { 200: T.Array(TrustRecordSchema) },
      handler: () => ({
        body: trust.list().map(({ path, trusted, decidedAt }): TrustRecord => ({ path, trusted, decidedAt })),
      }),
    }),
    defineRoute({
      method: "GET",
      path: "/projects/trust",
      operationId: "getProjectTrust",
      summary: "Trust decision and local resources of the project containing cwd",
      description:
        "Project-local personas, skills, rules, context files, hooks, MCP servers and SSH hosts are used only when " +
        "the project is trusted; they are listed here either way so a client can show what trusting would enable.",
      tags: ["projects"],
      query: TrustQuery,
      responses: { 200: ProjectTrustSchema },
      handler: (req) => ({ body: trustStatus(trust, resources, requireDirectory(req.query.cwd)) }),
    }),
    defineRoute({
      method: "POST",
      path: "/projects/trust",
      operationId: "setProjectTrust",
      summary: "Trusts or distrusts the project containing cwd",
      description:
        "Persisted in the daemon home; takes effect at the next model call of every session in the project. " +
        "Trusting (again) pins the content hash of each project plugin in .agentd/plugins and loads those plugins " +
        "before answering; distrusting unloads them.",
      tags: ["projects"],
      body: TrustBody,
      responses: { 200: ProjectTrustSchema },
      handler: async (req) => {
        const dir = requireDirectory(req.body.cwd);
        await trust.set(dir, req.body.trusted);
        await trust.applied();
        return { body: trustStatus(trust, resources, dir) };
      },
    }),
    defineRoute({
      method: "POST",
      path: "/projects/reload",
      operationId: "reloadProjectResources",
      summary: "Re-scans global and project personas, skills, rules, context files and hooks",
      tags: ["projects"],
      responses: { 200: OkSchema },
      handler: async () => {
        await reload();
        return { body: { ok: true as const } };
      },
    }),
  ];
}
