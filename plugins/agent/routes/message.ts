import { ApiError, defineRoute, SessionIdParams } from "../../../core/index.js";
import { Accepted, MessageRequest, reply, type TurnRouteDeps, tags } from "./shared.js";

/** POST /sessions/:id/steer and /followup: the same request, injected into the running turn or queued after it. */
export function messageRoute(kind: "steer" | "followup", { svc, team }: TurnRouteDeps) {
  return defineRoute({
    method: "POST",
    path: `/sessions/:id/${kind}`,
    operationId: kind,
    summary:
      kind === "steer"
        ? "Inject a message before the next model call (starts a turn when idle)"
        : "Queue a message to run after the current turn (starts a turn when idle)",
    tags,
    params: SessionIdParams,
    body: MessageRequest,
    responses: { 202: Accepted },
    handler: async ({ params, body }) => {
      const rec = await svc().require(params.id);
      const text = body.message.trim();
      if (!text) throw ApiError.badRequest("Empty message");
      const clientMessageId = body.clientMessageId?.trim();
      const payload = { text, ...(clientMessageId ? { clientMessageId } : {}) };
      return reply(await team.control(params.id, kind, payload, rec));
    },
  });
}
