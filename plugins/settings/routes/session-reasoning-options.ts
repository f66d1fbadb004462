import { defineRoute, SessionIdParams, type Static } from "../../../core/index.js";
import { reasoningOptionsFor } from "../../../core/reasoning.js";
import { ReasoningOptionsSchema, type SettingsRouteDeps } from "./shared.js";

export function sessionReasoningOptionsRoute({ sessions, dialect }: SettingsRouteDeps) {
  return defineRoute({
    method: "GET",
    path: "/sessions/:id/reasoning-options",
    operationId: "getSessionReasoningOptions",
    summary: "Reasoning choices for the session's model, with its current choice",
    tags: ["sessions"],
    params: SessionIdParams,
    responses: { 200: ReasoningOptionsSchema },
    handler: async ({ params }) => {
      const rec = await sessions().require(params.id);
      const body: Static<typeof ReasoningOptionsSchema> = reasoningOptionsFor(rec.model, dialect());
      const current = rec.meta.reasoningEffort;
      if (typeof current === "string" && current) body.current = current;
      return { body };
    },
  });
}
