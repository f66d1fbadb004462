import { defineRoute, OkSchema, type PermissionRules, T } from "../../../core/index.js";
import { tags } from "./shared.js";

export function deleteRuleRoute(ops: PermissionRules) {
  return defineRoute({
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
  });
}
