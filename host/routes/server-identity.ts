import { Type as T } from "@sinclair/typebox";
import { defineRoute } from "../../core/routes.js";
import type { HostRouteDeps } from "./shared.js";

const DaemonIdentitySchema = T.Object(
  { instanceId: T.String(), pid: T.Integer(), version: T.String() },
  { title: "DaemonIdentity" },
);

export function serverIdentityRoute({ info }: HostRouteDeps) {
  return defineRoute({
    method: "GET",
    path: "/server/identity",
    operationId: "getServerIdentity",
    summary: "Identity of this daemon process (to verify a recorded pid)",
    tags: ["server"],
    responses: { 200: DaemonIdentitySchema },
    handler: () => ({ body: { instanceId: info.instanceId, pid: info.pid, version: info.version } }),
  });
}
