import { defineRoute, OkSchema } from "../../../core/index.js";
import type { ProjectRouteDeps } from "./shared.js";

export function reloadProjectRoute({ reload }: ProjectRouteDeps) {
  return defineRoute({
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
  });
}
