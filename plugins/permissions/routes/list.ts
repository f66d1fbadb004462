import { defineRoute, type PermissionRules, T } from "../../../core/index.js";
import { PermissionRuleSchema, tags } from "./shared.js";

export function listRulesRoute(ops: PermissionRules) {
  return defineRoute({
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
  });
}
