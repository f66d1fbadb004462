import { type AnyRoute, defineRoute, OkSchema, type PermissionRules, T } from "../../core/index.js";

const Scope = T.Union([T.Literal("session"), T.Literal("project"), T.Literal("global")]);
const Action = T.Union([T.Literal("allow"), T.Literal("deny"), T.Literal("ask")]);

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

const NewRuleSchema = T.Object(
  {
    scope: Scope,
    action: Action,
    pattern: T.String({ minLength: 1, maxLength: 1000 }),
    cwd: T.Optional(T.String({ minLength: 1, maxLength: 4096, description: "Project scope: a directory of it" })),
    sessionId: T.Optional(T.String({ minLength: 1, maxLength: 100, description: "Session scope: the session" })),
  },
  { title: "NewPermissionRule", additionalProperties: false },
);

const tags = ["permissions"];

export function permissionRoutes(ops: PermissionRules): AnyRoute[] {
  return [
    defineRoute({
      method: "GET",
      path: "/permissions/rules",
      operationId: "listPermissionRules",
      summary: "Approval rules: saved by the user (session, project, global) and configured in config.json",
      description:
        "With `cwd`, only the rules that can apply there (global ones, that project's, and session rules). " +
        "Precedence when several match a command: deny beats ask beats allow.",
      tags,
      query: T.Object({ cwd: T.Optional(T.String({ minLength: 1, maxLength: 4096 })) }),
      responses: { 200: T.Object({ rules: T.Array(PermissionRuleSchema) }, { title: "PermissionRuleList" }) },
      handler: ({ query }) => ({ body: { rules: [...ops.list(query.cwd)] } }),
    }),
    defineRoute({
      method: "POST",
      path: "/permissions/rules",
      operationId: "addPermissionRule",
      summary: "Saves an approval rule (project scope needs cwd; session scope needs sessionId)",
      tags,
      body: NewRuleSchema,
      errors: [404],
      responses: { 201: PermissionRuleSchema },
      handler: async ({ body }) => ({ status: 201, body: await ops.add(body) }),
    }),
    defineRoute({
      method: "DELETE",
      path: "/permissions/rules/:ruleId",
      operationId: "deletePermissionRule",
      summary: "Revokes a saved rule (409 for a rule from config.json)",
      tags,
      params: T.Object({ ruleId: T.String({ minLength: 1, maxLength: 100 }) }),
      errors: [404, 409],
      responses: { 200: OkSchema },
      handler: async ({ params }) => {
        await ops.remove(params.ruleId);
        return { body: { ok: true as const } };
      },
    }),
  ];
}
