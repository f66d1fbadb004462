import { type AnyRoute, defineRoute, MAX_SEQ, SessionIdParams, T } from "../../core/index.js";
import { catalogue } from "./catalogue.js";
import { executeCommand } from "./dispatch.js";
import type { CommandEnv } from "./env.js";
import { previewRewind, redo, rewind } from "./rewind.js";
import { suggest } from "./suggest.js";

const RestoreSchema = T.Union([T.Literal("both"), T.Literal("code"), T.Literal("conversation")], {
  description: "code: the files as before that turn; conversation: drop the message and all after it; both (default)",
});

export const RewindRequestSchema = T.Object(
  {
    messageSeq: T.Integer({ minimum: 0, maximum: MAX_SEQ, description: "A user message's seq" }),
    restore: T.Optional(RestoreSchema),
  },
  { title: "RewindRequest", additionalProperties: false },
);

const FileLists = {
  restored: T.Array(T.String(), { description: "Files written back (modified or deleted since)" }),
  removed: T.Array(T.String(), { description: "Files removed (created since)" }),
};

export const RewindResultSchema = T.Object(
  {
    action: T.Union([T.Literal("rewind"), T.Literal("redo"), T.Literal("none")]),
    fromSeq: T.Optional(T.Integer()),
    restore: T.Optional(RestoreSchema),
    filesRestored: T.Boolean(),
    ...FileLists,
    messageCount: T.Integer(),
  },
  { title: "RewindResult" },
);

const RewindPreviewSchema = T.Object(
  {
    messageSeq: T.Integer(),
    available: T.Boolean({ description: "false: the files cannot be restored (reason says why)" }),
    reason: T.Optional(T.String()),
    created: T.Array(T.String(), { description: "Would be removed" }),
    modified: T.Array(T.String(), { description: "Would be written back" }),
    deleted: T.Array(T.String(), { description: "Would be recreated" }),
  },
  { title: "RewindPreview" },
);

export const CommandRequestSchema = T.Object(
  {
    command: T.String({
      minLength: 1,
      maxLength: 100_000,
      description: 'A slash command line, e.g. "/undo --force" or "/model gpt-4.1"',
    }),
  },
  { title: "CommandRequest", additionalProperties: false },
);

export const CommandResponseSchema = T.Object(
  {
    ok: T.Literal(true),
    command: T.String({ description: "The command that ran (an alias answers with its command's name)" }),
    result: T.Union(
      [
        T.String(),
        T.Object(
          { sessionId: T.String(), message: T.String({ description: "The readable outcome" }) },
          { additionalProperties: false },
        ),
      ],
      {
        description:
          "The readable outcome, to show as is; a command that names a session (/fork) answers {sessionId, message} " +
          "instead, as cast's daemon does",
      },
    ),
    message: T.String({ description: "The readable outcome, always text (show this one)" }),
    data: T.Optional(
      T.Object(
        {},
        {
          additionalProperties: true,
          description: "Structured data of the command (lists for pickers, ids, the new value of a setting)",
        },
      ),
    ),
  },
  { title: "CommandResponse", additionalProperties: false },
);

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

export const SuggestionSchema = T.Object(
  {
    value: T.String({ description: "The completed composer text" }),
    label: T.String(),
  },
  { title: "Suggestion" },
);

const SuggestQuery = T.Object({
  q: T.Optional(T.String({ maxLength: 2000, description: "The composer text typed so far" })),
  session: T.Optional(T.String({ maxLength: 200, description: "Session whose working directory and model to use" })),
});

const COMMAND_DESCRIPTION =
  "The input must start with / (else 400). Unknown commands are sent to the agent as an ordinary message. " +
  "Commands marked blocking in GET /commands are refused with 409 while a turn runs; /undo also answers 409 " +
  '(code "undo_needs_force", with createdFiles) when it would delete files created since the turn started.';

export function commandRoutes(env: CommandEnv): AnyRoute[] {
  const tags = ["commands"];
  return [
    defineRoute({
      method: "POST",
      path: "/sessions/:id/rewind",
      operationId: "rewindSession",
      summary: "Rewind to a user message: its turn's files, the conversation from it on, or both",
      description:
        "404 for an unknown messageSeq, 400 when it is not a user message or did not start a turn, 409 while a " +
        'turn runs and when the files cannot be restored (code "checkpoint_pruned" or "checkpoint_missing"). ' +
        "A checkpoint of the files and the dropped messages are kept: POST /sessions/{id}/redo (or /redo) undoes " +
        "the rewind once. Emits a rewind event (with the recent history) and a session_update.",
      tags,
      params: SessionIdParams,
      body: RewindRequestSchema,
      errors: [409],
      responses: { 200: RewindResultSchema },
      handler: async ({ params, body }) => {
        const rec = await env.sessions().require(params.id);
        return { body: await rewind(env, rec, body.messageSeq, body.restore ?? "both") };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/sessions/:id/rewind",
      operationId: "previewRewind",
      summary: "Which files a rewind to a user message would change",
      tags,
      params: SessionIdParams,
      query: T.Object({ messageSeq: T.Integer({ minimum: 0, maximum: MAX_SEQ }) }),
      responses: { 200: RewindPreviewSchema },
      handler: async ({ params, query }) => {
        const rec = await env.sessions().require(params.id);
        return { body: await previewRewind(env, rec, query.messageSeq) };
      },
    }),
    defineRoute({
      method: "POST",
      path: "/sessions/:id/redo",
      operationId: "redoSession",
      summary: "Undo the last rewind (/redo): its files and messages come back; action none when there is none",
      tags,
      params: SessionIdParams,
      errors: [409],
      responses: { 200: RewindResultSchema },
      handler: async ({ params }) => {
        const rec = await env.sessions().require(params.id);
        const out = await redo(env, rec);
        return {
          body: out ?? {
            action: "none" as const,
            filesRestored: false,
            restored: [],
            removed: [],
            messageCount: rec.messageCount,
          },
        };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/commands",
      operationId: "listCommands",
      summary: "The slash commands (built-in and contributed by plugins)",
      tags: ["catalog"],
      responses: { 200: T.Array(SlashCommandSchema) },
      handler: () => ({ body: catalogue(env).map(({ command: _c, ...entry }) => entry) }),
    }),
    defineRoute({
      method: "GET",
      path: "/suggest",
      operationId: "suggest",
      summary: "Composer completions for a partial slash command (names, then arguments)",
      tags: ["catalog"],
      query: SuggestQuery,
      responses: { 200: T.Array(SuggestionSchema) },
      handler: async ({ query }) => {
        const rec = query.session ? await env.sessions().find(query.session) : undefined;
        return { body: suggest(env, query.q ?? "", rec) };
      },
    }),
    defineRoute({
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
    }),
    defineRoute({
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
    }),
  ];
}
