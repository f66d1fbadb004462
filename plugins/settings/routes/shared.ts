import type { DaemonSettings, SessionService } from "../../../core/index.js";
import { T } from "../../../core/index.js";
import { DIALECTS, type Dialect } from "../../../core/reasoning.js";
import type { AppearanceStore } from "../appearance.js";

/** The optional capabilities /config reports, each true when its tool or route is loaded. */
export type Feature = "memory" | "web" | "shell" | "ssh" | "subagents" | "mcp" | "share";

/** What the settings routes read. */
export interface SettingsRouteDeps {
  settings: () => DaemonSettings;
  sessions: () => SessionService;
  appearance: AppearanceStore;
  /** The provider's reasoning dialect: the configured one, or detected from the base URL. */
  dialect: () => Dialect;
  defaultModel: () => string;
  /** The theme id /config suggests: the configured one when it exists, else the first. */
  theme: () => string | null;
  features: () => Record<Feature, boolean>;
}

export const tags = ["settings"];

export const ReasoningOptionsSchema = T.Object(
  {
    options: T.Array(T.Object({ value: T.String(), label: T.String() }), {
      description: "Choices for the model, in order; empty when the model has no reasoning control",
    }),
    model: T.String(),
    dialect: T.String({ description: `How the endpoint spells reasoning: ${DIALECTS.join(", ")}` }),
    kind: T.Union([T.Literal("effort"), T.Literal("toggle"), T.Literal("none")]),
    default: T.Union([T.String(), T.Null()]),
    current: T.Optional(T.String({ description: "The session's chosen value, when one was set" })),
  },
  { title: "ReasoningOptions" },
);
