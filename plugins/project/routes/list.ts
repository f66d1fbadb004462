import { defineRoute, T, type TrustRecord } from "../../../core/index.js";
import type { ProjectRouteDeps } from "./shared.js";

const TrustRecordSchema = T.Object(
  { path: T.String(), trusted: T.Boolean(), decidedAt: T.String({ format: "date-time" }) },
  { title: "ProjectTrustRecord" },
);

export function listProjectsRoute({ trust }: ProjectRouteDeps) {
  return defineRoute({
    method: "GET",
    path: "/projects",
    operationId: "listProjectTrust",
    summary: "Projects with a trust decision",
    tags: ["projects"],
    responses: { 200: T.Array(TrustRecordSchema) },
    handler: () => ({
      body: trust.list().map(({ path, trusted, decidedAt }): TrustRecord => ({ path, trusted, decidedAt })),
    }),
  });
}
