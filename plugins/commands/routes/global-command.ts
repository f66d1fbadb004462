import { defineRoute } from "../../../core/index.js";
import { executeCommand } from "../dispatch.js";
import type { CommandEnv } from "../env.js";
import { CommandRequestSchema, CommandResponseSchema, tags } from "./shared.js";

export function globalCommandRoute(env: CommandEnv) {
  return defineRoute({
    method: "POST",
    path: "/settings/command",
    operationId: "runGlobalCommand",
    summary: "Run a slash command that needs no session (settings and listings)",
    description:
      "Only commands marked global in GET /commands; the others answer 400 (Command requires an active session).",
    tags,
    body: CommandRequestSchema,
    responses: { 200: CommandResponseSchema },
    handler: async ({ body }) => ({ body: await executeCommand(env, body.command, undefined) }),
  });
}
