import { defineRoute, type PermissionRules, T } from "../../../core/index.js";
import { Action, PermissionRuleSchema, Scope, tags } from "./shared.js";

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

export function addRuleRoute(ops: PermissionRules) {
  return defineRoute({
    method: "POST",
    path: "/permissions/rules",
    operationId: "addPermissionRule",
    summary: "Saves an approval rule (project scope needs cwd; session scope needs sessionId)",
    tags,
    body: NewRuleSchema,
    errors: [404],
    responses: { 201: PermissionRuleSchema },
    handler: async ({ body }) => ({ status: 201, body: await ops.add(body) }),
  });
}
