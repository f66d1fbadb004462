import { defineRoute, T } from "../../../core/index.js";
import { requireDirectory } from "../paths.js";
import { CwdSchema, type ProjectRouteDeps, ProjectTrustSchema, trustStatus } from "./shared.js";

const TrustBody = T.Object({ cwd: CwdSchema, trusted: T.Boolean() }, { additionalProperties: false });

export function setTrustRoute({ trust, resources }: ProjectRouteDeps) {
  return defineRoute({
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
  });
}
