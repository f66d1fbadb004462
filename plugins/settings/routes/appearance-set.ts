import { defineRoute, T } from "../../../core/index.js";
import { type SettingsRouteDeps, tags } from "./shared.js";

const AppearanceUpdate = T.Object(
  { showReasoning: T.Boolean({ description: "Show the model's reasoning in transcripts" }) },
  { title: "AppearanceUpdate", additionalProperties: false },
);

export function setAppearanceRoute({ appearance }: SettingsRouteDeps) {
  return defineRoute({
    method: "POST",
    path: "/settings/appearance",
    operationId: "setAppearance",
    summary: "Change appearance settings (persisted in the daemon home)",
    tags,
    body: AppearanceUpdate,
    bodyLimit: 4096,
    responses: {
      200: T.Object({ ok: T.Literal(true), showReasoning: T.Boolean() }, { title: "AppearanceUpdated" }),
    },
    handler: async ({ body }) => ({
      body: { ok: true as const, ...(await appearance.set({ showReasoning: body.showReasoning })) },
    }),
  });
}
