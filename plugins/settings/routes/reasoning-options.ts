import { defineRoute } from "../../../core/index.js";
import { reasoningOptionsFor } from "../../../core/reasoning.js";
import { ReasoningOptionsSchema, type SettingsRouteDeps, tags } from "./shared.js";

export function reasoningOptionsRoute({ defaultModel, dialect }: SettingsRouteDeps) {
  return defineRoute({
    method: "GET",
    path: "/settings/reasoning-options",
    operationId: "getReasoningOptions",
    summary: "Reasoning choices for the default model on the configured provider",
    tags,
    responses: { 200: ReasoningOptionsSchema },
    handler: () => ({ body: reasoningOptionsFor(defaultModel(), dialect()) }),
  });
}
