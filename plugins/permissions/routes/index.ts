import type { AnyRoute, PermissionRules } from "../../../core/index.js";
import { addRuleRoute } from "./add.js";
import { deleteRuleRoute } from "./delete.js";
import { listRulesRoute } from "./list.js";

/** The approval-rule routes, one per file; the order is the OpenAPI document's. */
export function permissionRoutes(ops: PermissionRules): AnyRoute[] {
  return [listRulesRoute(ops), addRuleRoute(ops), deleteRuleRoute(ops)];
}
