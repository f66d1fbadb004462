import { listPersonasRoute } from "./list.js";
import { personaContentRoute } from "./persona-content.js";
import type { CatalogDeps } from "./shared.js";
import { skillContentRoute } from "./skill-content.js";

export type { CatalogDeps } from "./shared.js";

/** The catalog routes, one per file: personas (built-in, global, project) and skill content. */
export function catalogRoutes(deps: CatalogDeps) {
  return [listPersonasRoute(deps), personaContentRoute(deps), skillContentRoute(deps)];
}
