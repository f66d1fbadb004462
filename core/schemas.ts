import { Type as T } from "@sinclair/typebox";
import { ERROR_CODE_LIST, type ErrorCode } from "./errors.js";

/**
 * Shared wire shapes. A `title` makes a schema a named component of the OpenAPI document; routes reuse these
 * objects so the document and the validation stay one thing.
 */
export const ErrorSchema = T.Object(
  {
    error: T.String({ description: "A readable message" }),
    code: T.Unsafe<ErrorCode>({
      type: "string",
      enum: [...ERROR_CODE_LIST],
      description: "A stable code to branch on (the message may change); see the README's table of error codes",
    }),
  },
  { title: "Error", additionalProperties: true },
);

/**
 * The largest sequence number, offset or count a request may carry: every integer of a request schema is bounded,
 * so no value reaches SQLite (64-bit) or JavaScript arithmetic past what either represents exactly.
 */
export const MAX_SEQ = Number.MAX_SAFE_INTEGER;

export const OkSchema = T.Object({ ok: T.Literal(true) }, { title: "Ok", additionalProperties: true });

export const SessionIdParams = T.Object({
  id: T.String({ description: "Session id", minLength: 1, maxLength: 200 }),
});

export const SessionUsageSchema = T.Object(
  {
    promptTokens: T.Number(),
    completionTokens: T.Number(),
    totalTokens: T.Number(),
    cost: T.Number(),
    cacheReadTokens: T.Number(),
    cacheWriteTokens: T.Number(),
    uncachedTokens: T.Number(),
    subagentTokens: T.Number(),
  },
  { title: "SessionUsage" },
);

const Names = (description: string) => T.Array(T.String(), { description });

export const ProjectResourcesSchema = T.Object(
  {
    personas: Names("Persona names in .agentd/personas"),
    skills: Names("Skill names in .agentd/skills"),
    rules: Names("Rule names in .agentd/rules"),
    contextFiles: Names("AGENTS.md / CLAUDE.md at the project root"),
    mcp: Names("MCP server names in .agentd/mcp.json"),
    hooks: Names('Hooks in .agentd/hooks.json, as "<event> [matcher]: <command>"'),
    ssh: Names("SSH hosts in .agentd/ssh.json"),
    plugins: T.Array(
      T.Object({
        name: T.String({ description: "The folder name in .agentd/plugins" }),
        hash: T.String({ description: 'sha256 of the folder\'s files ("" when unreadable)' }),
        state: T.Union([T.Literal("trusted"), T.Literal("new"), T.Literal("changed")], {
          description:
            "trusted: matches the hash trust was pinned to (loads); new/changed: loads after trust is renewed",
        }),
      }),
      { description: "Plugins in .agentd/plugins and their state against the trust decision" },
    ),
  },
  { title: "ProjectResources", description: "Project-local resources, listed whatever the trust" },
);

export const ProjectTrustPromptSchema = T.Object(
  {
    required: T.Literal(true),
    path: T.String({ description: "The project root; decide with POST /projects/trust {cwd: path, trusted}" }),
    resources: ProjectResourcesSchema,
  },
  {
    title: "ProjectTrustPrompt",
    description:
      "The session's project has local resources and no trust decision yet, or is trusted but has project plugins that are new or changed since (renew with POST /projects/trust {trusted: true}); absent otherwise",
  },
);

export const SessionWaitingSchema = T.Union([T.Literal("confirmation"), T.Literal("question"), T.Literal("plan")], {
  title: "SessionWaiting",
  description:
    "Present only while the session waits for its user's decision, the most urgent when several are pending: " +
    "`confirmation` a dangerous command waits to be allowed or denied (POST /sessions/{id}/bash-confirm; it times " +
    "out as denied), `question` the turn waits for an answer (POST /sessions/{id}/question), `plan` a finished plan " +
    "waits for approval (POST /sessions/{id}/plan-transition; the turn has ended). A `session_update` announces " +
    "the summary again when it appears, changes or clears. The details are in GET /sessions/{id} and the first " +
    "frame of the session's stream",
});

export const WorktreeInfoSchema = T.Object(
  {
    path: T.String({ description: "The worktree directory (the session's working directory)" }),
    branch: T.String({ description: "The branch checked out in it" }),
    base: T.String({ description: "What it was branched from and merges into: a branch, or a commit" }),
    repository: T.String({ description: "The repository's main checkout" }),
  },
  { title: "WorktreeInfo", description: "The session's own git worktree" },
);

export const SessionSummarySchema = T.Object(
  {
    id: T.String(),
    persona: T.String(),
    model: T.String(),
    cwd: T.String(),
    title: T.Optional(T.String()),
    pinned: T.Optional(T.Boolean()),
    mode: T.Union([T.Literal("build"), T.Literal("plan")]),
    status: T.Union([T.Literal("idle"), T.Literal("running"), T.Literal("error")]),
    isSandbox: T.Boolean(),
    messageCount: T.Integer({ description: "User messages plus assistant messages with text" }),
    createdAt: T.String({ format: "date-time" }),
    updatedAt: T.String({ format: "date-time" }),
    projectTrust: T.Optional(ProjectTrustPromptSchema),
    waiting: T.Optional(SessionWaitingSchema),
    worktree: T.Optional(WorktreeInfoSchema),
    match: T.Optional(
      T.Object(
        {
          seq: T.Integer({ minimum: 1 }),
          role: T.String(),
          snippet: T.String({ description: "An excerpt around the match" }),
        },
        {
          title: "SessionMatch",
          description: "In a search whose terms the title does not hold: the newest message that matched",
        },
      ),
    ),
  },
  { title: "SessionSummary" },
);

export const DisplayToolCallSchema = T.Object(
  {
    id: T.String(),
    name: T.String(),
    args: T.String({ description: "Raw JSON arguments from the model" }),
    status: T.Union([T.Literal("ok"), T.Literal("error"), T.Literal("running")]),
    result: T.String(),
    error: T.Optional(T.Unknown()),
    images: T.Optional(T.Array(T.String())),
  },
  { title: "DisplayToolCall" },
);

export const DisplayMessageSchema = T.Object(
  {
    role: T.Union([T.Literal("system"), T.Literal("user"), T.Literal("assistant"), T.Literal("warning")]),
    content: T.Union([T.String(), T.Null()]),
    seq: T.Optional(T.Integer()),
    clientMessageId: T.Optional(T.String()),
    toolCalls: T.Optional(T.Array(DisplayToolCallSchema)),
    thinking: T.Optional(T.String()),
    turnMeta: T.Optional(T.Unknown()),
    images: T.Optional(T.Array(T.String({ description: "URL of GET /sessions/{id}/image" }))),
  },
  { title: "DisplayMessage" },
);

export const HistoryPageFields = {
  messages: T.Array(DisplayMessageSchema),
  oldestSeq: T.Union([T.Integer(), T.Null()]),
  hasMoreHistory: T.Boolean(),
};

export const SessionSchema = T.Object(
  {
    id: T.String(),
    persona: T.String(),
    model: T.String(),
    cwd: T.String(),
    mode: T.Union([T.Literal("build"), T.Literal("plan")]),
    title: T.Optional(T.String()),
    pinned: T.Optional(T.Boolean()),
    isSandbox: T.Boolean(),
    shareToken: T.Union([T.String(), T.Null()]),
    shareToolResults: T.Optional(
      T.Boolean({ description: "Whether the shared page shows tool results (chosen with POST /sessions/{id}/share)" }),
    ),
    status: T.Union([T.Literal("idle"), T.Literal("running"), T.Literal("error")]),
    turnStartedAt: T.Union([T.Integer({ description: "Epoch ms" }), T.Null()]),
    streaming: T.Union([T.Array(T.Unknown()), T.Null()], { description: "Live blocks of the running turn" }),
    ...HistoryPageFields,
    messageCount: T.Integer(),
    usage: SessionUsageSchema,
    createdAt: T.String({ format: "date-time" }),
    updatedAt: T.String({ format: "date-time" }),
    projectTrust: T.Optional(ProjectTrustPromptSchema),
    waiting: T.Optional(SessionWaitingSchema),
    worktree: T.Optional(WorktreeInfoSchema),
    lastError: T.Optional(
      T.Object(
        {
          message: T.String(),
          afterSeq: T.Integer({ description: "The last stored message when the turn failed" }),
          at: T.String({ format: "date-time" }),
        },
        {
          title: "SessionTurnError",
          description: "Why the session's last turn failed; present until the next turn starts",
        },
      ),
    ),
    lastSeq: T.Optional(
      T.Integer({
        minimum: 0,
        description:
          "The session stream's last event when this was read: open /sessions/{id}/events from it (Last-Event-ID, " +
          "or ?lastEventId= for EventSource) to miss nothing between the read and the stream",
      }),
    ),
  },
  {
    title: "Session",
    additionalProperties: true,
    description: "Pending decisions (question, planTransition, pendingConfirmations) appear as extra fields",
  },
);
