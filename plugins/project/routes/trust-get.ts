import { defineRoute, T } from "../../../core/index.js";
import { requireDirectory } from "../paths.js";
import { CwdSchema, type ProjectRouteDeps, ProjectTrustSchema, trustStatus } from "./shared.js";

const TrustQuery = T.Object({ cwd: CwdSchema });

export function getTrustRoute({ trust, resources }: ProjectRouteDeps) {
  return defineRoute({
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
  });
}
