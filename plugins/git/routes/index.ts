import type { AnyRoute } from "../../../core/index.js";
import type { DiffLimits } from "../diff.js";
import { type GitInfoDeps, gitInfoRoute } from "./git-info.js";
import { sessionDiffRoute } from "./session-diff.js";

/** The git routes, one per file; the order is the OpenAPI document's. */
export function gitRoutes(deps: GitInfoDeps & { limits: DiffLimits }): AnyRoute[] {
  return [gitInfoRoute(deps), sessionDiffRoute(deps.sessions, deps.limits)];
}
