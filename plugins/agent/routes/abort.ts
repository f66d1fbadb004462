import { defineRoute, OkSchema, SessionIdParams } from "../../../core/index.js";
import { reply, type TurnRouteDeps, tags } from "./shared.js";

export function abortRoute({ svc, team }: TurnRouteDeps) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/abort",
    operationId: "abort",
    summary: "Abort the running turn (ends with reason aborted; queues cleared). 200 also when idle",
    tags,
    params: SessionIdParams,
    responses: { 200: OkSchema },
    handler: async ({ params }) => {
      await svc().require(params.id);
      return reply(await team.control(params.id, "abort", {}));
    },
  });
}
