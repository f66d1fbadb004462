import { defineRoute, SessionIdParams } from "../../../core/index.js";
import { executeCommand } from "../dispatch.js";
import type { CommandEnv } from "../env.js";
import { CommandRequestSchema, CommandResponseSchema, tags } from "./shared.js";

const COMMAND_DESCRIPTION =
  "The input must start with / (else 400). Unknown commands are sent to the agent as an ordinary message. " +
  "Commands marked blocking in GET /commands are refused with 409 while a turn runs; /undo also answers 409 " +
  '(code "undo_needs_force", with createdFiles) when it would delete files created since the turn started.';

export function sessionCommandRoute(env: CommandEnv) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/command",
    operationId: "runCommand",
    summary: "Run a slash command in a session",
    description: COMMAND_DESCRIPTION,
    tags,
    params: SessionIdParams,
    body: CommandRequestSchema,
    errors: [409],
    responses: { 200: CommandResponseSchema },
    handler: async ({ params, body }) => ({ body: await executeCommand(env, body.command, params.id) }),
  });
}
