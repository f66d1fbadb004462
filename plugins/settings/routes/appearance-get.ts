import { defineRoute, T } from "../../../core/index.js";
import { type SettingsRouteDeps, tags } from "./shared.js";

const AppearanceSchema = T.Object({ showReasoning: T.Boolean() }, { title: "Appearance" });

export function getAppearanceRoute({ appearance }: SettingsRouteDeps) {
  return defineRoute({
    method: "GET",
    path: "/settings/appearance",
    operationId: "getAppearance",
    summary: "Appearance settings shared by every client",
    tags,
    responses: { 200: AppearanceSchema },
    handler: () => ({ body: appearance.get() }),
  });
}
