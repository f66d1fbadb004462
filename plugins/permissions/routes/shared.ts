import { T } from "../../../core/index.js";

export const Scope = T.Union([T.Literal("session"), T.Literal("project"), T.Literal("global")]);
export const Action = T.Union([T.Literal("allow"), T.Literal("deny"), T.Literal("ask")]);

export const PermissionRuleSchema = T.Object(
  {
    id: T.String(),
    scope: Scope,
    action: Action,
    pattern: T.String({ description: "Words of one command; a final `*` matches any further arguments" }),
    tool: T.Literal("bash"),
    project: T.Optional(T.String({ description: "The project's root (git top level), for project scope" })),
    sessionId: T.Optional(T.String()),
    source: T.Union([T.Literal("user"), T.Literal("config")]),
    createdAt: T.String(),
    unsandboxed: T.Optional(
      T.Boolean({ description: "Saved while answering a 'not sandboxed' question: also covers unconfined runs" }),
    ),
  },
  { title: "PermissionRule" },
);

export const tags = ["permissions"];
