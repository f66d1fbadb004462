import type { AnyRoute } from "../../../core/index.js";
import type { CommandEnv } from "../env.js";
import { globalCommandRoute } from "./global-command.js";
import { listCommandsRoute } from "./list.js";
import { redoRoute } from "./redo.js";
import { rewindRoute } from "./rewind.js";
import { rewindPreviewRoute } from "./rewind-preview.js";
import { sessionCommandRoute } from "./session-command.js";
import { suggestRoute } from "./suggest.js";

/** The command plugin's routes, one per file; the order is the OpenAPI document's. */
export function commandRoutes(env: CommandEnv): AnyRoute[] {
  return [
    rewindRoute(env),
    rewindPreviewRoute(env),
    redoRoute(env),
    listCommandsRoute(env),
    suggestRoute(env),
    globalCommandRoute(env),
    sessionCommandRoute(env),
  ];
}
