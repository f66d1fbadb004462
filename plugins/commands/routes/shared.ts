import { T } from "../../../core/index.js";

export const tags = ["commands"];

export const RestoreSchema = T.Union([T.Literal("both"), T.Literal("code"), T.Literal("conversation")], {
  description: "code: the files as before that turn; conversation: drop the message and all after it; both (default)",
});

const FileLists = {
  restored: T.Array(T.String(), { description: "Files written back (modified or deleted since)" }),
  removed: T.Array(T.String(), { description: "Files removed (created since)" }),
};

/** What a rewind and a redo answer. */
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

/** The body of both command routes (in a session, and global). */
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

/** What both command routes answer. */
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
