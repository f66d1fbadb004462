import type { AnyRoute } from "../../../core/index.js";
import type { Worktrees } from "../service.js";
import { discardWorktreeRoute } from "./discard.js";
import { getWorktreeRoute } from "./get.js";
import { mergeWorktreeRoute } from "./merge.js";
import { newWorktreeRoute } from "./new.js";

/** The worktree routes, one per file; the order is the OpenAPI document's. */
export function worktreeRoutes(w: Worktrees): AnyRoute[] {
  return [getWorktreeRoute(w), newWorktreeRoute(w), mergeWorktreeRoute(w), discardWorktreeRoute(w)];
}
