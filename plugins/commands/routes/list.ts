import { defineRoute, T } from "../../../core/index.js";
import { catalogue } from "../catalogue.js";
import type { CommandEnv } from "../env.js";

export const SlashCommandSchema = T.Object(
  {
    name: T.String({ description: "With the leading slash; aliases are listed as entries of their own" }),
    description: T.String(),
    aliasOf: T.Optional(T.String({ description: "For an alias: the command it runs" })),
    aliases: T.Optional(T.Array(T.String())),
    argumentHint: T.String({ description: 'What to type after the name, e.g. "[N|reset]"; "" when none' }),
    takesArgs: T.Boolean(),
    blocking: T.Boolean({ description: "Refused with 409 while a turn runs" }),
    global: T.Boolean({ description: "Also accepted without a session (POST /settings/command)" }),
    scope: T.Union([T.Literal("session"), T.Literal("global"), T.Literal("both")], {
      description: "Where it works: in a session (POST /sessions/{id}/command), globally, or both",
    }),
  },
  { title: "SlashCommand" },
);

export function listCommandsRoute(env: CommandEnv) {
  return defineRoute({
    method: "GET",
    path: "/commands",
    operationId: "listCommands",
    summary: "The slash commands (built-in and contributed by plugins)",
    tags: ["catalog"],
    responses: { 200: T.Array(SlashCommandSchema) },
    handler: () => ({ body: catalogue(env).map(({ command: _c, ...entry }) => entry) }),
  });
}
