import type { AnyRoute, SessionService, TurnManager } from "../../../core/index.js";
import type { TeamTurns } from "../team.js";
import { abortRoute } from "./abort.js";
import { chatRoute } from "./chat.js";
import { cleanContextRoute } from "./clean-context.js";
import { confirmRoute } from "./confirm.js";
import { editorAttachRoute } from "./editor-attach.js";
import { editorDetachRoute } from "./editor-detach.js";
import { editorReplyRoute } from "./editor-reply.js";
import { messageRoute } from "./message.js";
import { modeRoute } from "./mode.js";
import { planTransitionRoute } from "./plan-transition.js";
import { questionRoute } from "./question.js";
import type { TurnRouteDeps } from "./shared.js";

/** The turn routes, one per file (see shared.ts for what they use); the order is the OpenAPI document's. */
export function agentRoutes(svc: () => SessionService, turns: () => TurnManager, team: TeamTurns): AnyRoute[] {
  const deps: TurnRouteDeps = { svc, turns, team };
  return [
    chatRoute(deps),
    abortRoute(deps),
    messageRoute("steer", deps),
    messageRoute("followup", deps),
    questionRoute(deps),
    confirmRoute(deps),
    editorAttachRoute(deps),
    editorDetachRoute(deps),
    editorReplyRoute(deps),
    modeRoute(deps),
    cleanContextRoute(deps),
    planTransitionRoute(deps),
  ];
}
