import { type Static, Type as T, type TLiteral, type TObject, type TProperties, type TSchema } from "@sinclair/typebox";
import { ProjectTrustPromptSchema, SessionSummarySchema, SessionUsageSchema } from "./schemas.js";

/**
 * The wire events of the two event streams (`/sessions/{id}/events` and `/sessions/events`), one TypeBox schema per
 * `type`. {@link SessionEvent} is derived from these schemas, so what the daemon emits, what the OpenAPI document
 * describes (`components.schemas.SessionEvent`) and what generated clients read cannot drift apart.
 *
 * Every frame carries `type`; the event log adds `sessionId` and `seq` (the frame's own sequence number, also the
 * SSE id). Payloads may gain fields in later versions (objects stay open), but the fields listed are always there
 * with these types.
 */

const Loose = { additionalProperties: true } as const;
const AnyObject = (description?: string) => T.Object({}, { ...Loose, ...(description ? { description } : {}) });

function event<K extends string, P extends TProperties>(
  type: K,
  props: P,
  description: string,
): TObject<{ type: TLiteral<K>; sessionId: ReturnType<typeof OptString>; seq: ReturnType<typeof OptSeq> } & P> {
  const name = `${type
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("")}Event`;
  return T.Object(
    { type: T.Literal(type), sessionId: OptString(), seq: OptSeq(), ...props },
    { title: name, description, ...Loose },
  );
}
function OptString() {
  return T.Optional(T.String({ description: "The session (added by the event log)" }));
}
function OptSeq() {
  return T.Optional(T.Integer({ description: "The frame's own sequence number (also the SSE id)" }));
}

const EndReasonSchema = T.Union([
  T.Literal("stop"),
  T.Literal("aborted"),
  T.Literal("error"),
  T.Literal("disconnected"),
]);
const ToolCallSchema = T.Object({ id: T.String(), name: T.String(), arguments: T.String() }, Loose);
const MessageSchema = T.Object(
  {
    role: T.String(),
    content: T.Unknown({ description: "Text or content parts" }),
    clientMessageId: T.Optional(T.String()),
    seq: T.Integer({ description: "The stored message's number" }),
  },
  Loose,
);

export const SessionEventSchemas = [
  event(
    "status",
    {
      status: T.Union([T.Literal("idle"), T.Literal("running"), T.Literal("error")]),
      startedAt: T.Optional(T.Number()),
      mode: T.Optional(T.String()),
      lastSeq: T.Optional(T.Integer()),
      question: T.Optional(T.Unknown()),
      planTransition: T.Optional(T.Unknown()),
      pendingConfirmations: T.Optional(T.Array(T.Unknown())),
      projectTrust: T.Optional(ProjectTrustPromptSchema),
    },
    "The turn status; the first frame of a session stream is the present state (mode, pending decisions, lastSeq)",
  ),
  event("user_message", { message: MessageSchema }, "A chat message that starts a turn"),
  event("token", { text: T.String() }, "A content delta (not persisted)"),
  event("thinking", { text: T.String() }, "A reasoning delta (not persisted)"),
  event("retry", { attempt: T.Integer(), delayMs: T.Number(), reason: T.String() }, "A provider call is retried"),
  event(
    "usage",
    {
      usage: T.Object(
        {
          promptTokens: T.Number(),
          completionTokens: T.Number(),
          totalTokens: T.Number(),
          cacheReadTokens: T.Optional(T.Number()),
        },
        Loose,
      ),
      generationMs: T.Number(),
      ttftMs: T.Optional(T.Number()),
      contextWindow: T.Number({ description: "Tokens, what compaction measures against" }),
    },
    "Token usage of one model call",
  ),
  event(
    "assistant_message",
    {
      messageSeq: T.Integer({ description: "The stored message's number, as in /history" }),
      content: T.String(),
      thinking: T.String(),
      toolCalls: T.Optional(T.Array(ToolCallSchema)),
      generationMs: T.Optional(
        T.Integer({ minimum: 0, description: "How long the call took (as stored in the message's turnMeta)" }),
      ),
    },
    "What one model call produced",
  ),
  event(
    "tool_start",
    {
      id: T.String(),
      name: T.String(),
      args: T.String({ description: "The call's JSON arguments" }),
      status: T.Optional(T.Literal("running")),
    },
    "A tool call starts",
  ),
  event(
    "tool_end",
    {
      id: T.String(),
      name: T.String(),
      status: T.Union([T.Literal("ok"), T.Literal("error")]),
      result: T.Object(
        {
          content: T.String(),
          isError: T.Optional(T.Boolean()),
          error: T.Optional(
            T.Object({ code: T.String(), retryable: T.Boolean(), suggestedFix: T.Optional(T.String()) }, Loose),
          ),
          imageCount: T.Optional(T.Integer()),
        },
        Loose,
      ),
    },
    "A tool call ended",
  ),
  event("tool_output", { toolCallId: T.String(), text: T.String() }, "Output of a running command (throttled)"),
  event(
    "bash_confirm",
    {
      id: T.String(),
      tool: T.String(),
      command: T.String(),
      reason: T.String(),
      reasons: T.Optional(
        T.Array(T.String(), { description: 'Kinds of reason: "dangerous", "network", "not sandboxed", "rule"' }),
      ),
      suggestedRule: T.Optional(
        T.String({ description: "The rule offered to remember the answer (POST bash-confirm `remember`)" }),
      ),
      expiresAt: T.String(),
    },
    "A command waits for the user's confirmation",
  ),
  event(
    "bash_confirm_resolved",
    {
      id: T.String(),
      allowed: T.Boolean(),
      by: T.Union([T.Literal("user"), T.Literal("timeout"), T.Literal("abort")]),
    },
    "A confirmation was settled",
  ),
  event(
    "decision_state",
    { question: T.Optional(T.Unknown()), planTransition: T.Optional(T.Unknown()) },
    "The pending question or plan transition (absent: cleared)",
  ),
  event("todos_updated", { todos: T.Array(T.Unknown()) }, "The session's todo list changed"),
  event(
    "todo_gate",
    { nudge: T.Integer(), maxNudges: T.Integer(), openTodos: T.Array(T.Unknown()) },
    "The turn was kept going because todos are open",
  ),
  event("steering_injected", { messages: T.Array(MessageSchema) }, "Steering messages joined the running turn"),
  event(
    "followup_injected",
    { messages: T.Array(MessageSchema) },
    "A queued follow-up joined the turn or became a new one",
  ),
  event(
    "compaction",
    { messagesCompacted: T.Integer(), tokensBefore: T.Number(), uptoSeq: T.Optional(T.Integer()) },
    "Older messages were summarised",
  ),
  event("compaction_failed", { reason: T.String() }, "Compaction failed; the history is unchanged"),
  event("turn_end", { toolResults: T.Array(T.Unknown()) }, "A model call round ended"),
  event(
    "turn_meta",
    { model: T.String(), provider: T.Optional(T.String()), totalMs: T.Number() },
    "What served the turn (before end)",
  ),
  event(
    "end",
    {
      reason: EndReasonSchema,
      recovered: T.Optional(T.Boolean({ description: "The turn was ended after a daemon crash" })),
      limit: T.Optional(T.Literal("iterations")),
    },
    "Exactly one per accepted turn",
  ),
  event("session_end", { usage: SessionUsageSchema, messageCount: T.Integer() }, "The session's totals after a turn"),
  event("fs_change", {}, "Tools that may have changed files ran"),
  event("notice", { message: T.String(), unsent: T.Optional(T.Array(T.String())) }, "Something to tell the user"),
  event("error", { message: T.String() }, "The turn failed"),
  event("context_cleaned", {}, "The conversation was cleared"),
  event(
    "undo",
    {
      fromSeq: T.Integer(),
      filesRestored: T.Boolean(),
      restored: T.Array(T.String()),
      removed: T.Array(T.String()),
    },
    "The last turn was undone",
  ),
  ...(["rewind", "redo"] as const).map((type) =>
    event(
      type,
      {
        fromSeq: T.Integer({ description: "The user message rewound to" }),
        restore: T.Union([T.Literal("both"), T.Literal("code"), T.Literal("conversation")]),
        filesRestored: T.Boolean(),
        restored: T.Array(T.String(), { description: "Files written back" }),
        removed: T.Array(T.String(), { description: "Files removed" }),
        messages: T.Array(T.Unknown(), {
          description: "The session's recent history after it (as in GET /sessions/{id})",
        }),
        oldestSeq: T.Union([T.Integer(), T.Null()]),
        hasMoreHistory: T.Boolean(),
      },
      type === "rewind"
        ? "The session was rewound to a user message (POST /sessions/{id}/rewind): redraw from messages"
        : "The last rewind was undone (/redo): redraw from messages",
    ),
  ),
  event("resources_reloaded", { cwd: T.String() }, "/reload re-read the project's resources"),
  event(
    "project_trust_required",
    { path: T.String(), cwd: T.String(), resources: AnyObject("The project's local resources") },
    "The project has local resources and no trust decision",
  ),
  event(
    "subagent_progress",
    {
      toolCallId: T.Optional(T.String()),
      description: T.Optional(T.String()),
      call: T.Integer(),
      toolCalls: T.Array(T.String()),
    },
    "A sub-agent made a model call",
  ),
  event("session_closed", { deleted: T.Optional(T.Boolean()) }, "The session was closed or deleted; the stream ends"),
  event(
    "editor_fs_request",
    {
      id: T.String(),
      op: T.Union([T.Literal("read"), T.Literal("write")]),
      path: T.String(),
      content: T.Optional(T.String()),
    },
    "An attached editor is asked for a file (answer with POST /sessions/{id}/editor/reply)",
  ),
  event("session_created", { session: SessionSummarySchema }, "A session was created (feed)"),
  event("session_update", { session: SessionSummarySchema }, "A session's summary changed"),
  event("session_deleted", { session: SessionSummarySchema }, "A session was deleted (feed)"),
  event("connected", { lastSeq: T.Integer() }, "The first frame of the feed"),
  event(
    "resync",
    { reason: T.String(), lastSeq: T.Integer() },
    "The missed frames cannot be replayed; re-read the state",
  ),
] as const;

const SessionEventUnion = T.Union([...SessionEventSchemas]);

/** A wire event, derived from the schemas above: a union discriminated by `type`. */
export type SessionEvent = Static<typeof SessionEventUnion>;

/**
 * Every wire event, as the OpenAPI document describes it (`components.schemas.SessionEvent`): `oneOf` the schemas
 * above with a `type` discriminator (each variant becomes its own component, `<Type>Event`).
 */
export const SessionEventSchema = T.Unsafe<SessionEvent>({
  title: "SessionEvent",
  description: "A frame of the event streams (`id: <seq>` + one-line JSON `data:`), discriminated by `type`",
  oneOf: [...SessionEventSchemas],
  discriminator: {
    propertyName: "type",
    mapping: Object.fromEntries(SessionEventSchemas.map((s) => [constOf(s), `#/components/schemas/${s.title}`])),
  },
});

function constOf(s: TObject): string {
  return (s.properties.type as TSchema & { const: string }).const;
}

/** Every wire event type. */
export type SessionEventType = SessionEvent["type"];

/** The wire event of one type. */
export type SessionEventOf<K extends SessionEventType> = Extract<SessionEvent, { type: K }>;

/** The event types, in the order of {@link SessionEventSchemas}. */
export const SESSION_EVENT_TYPES = SessionEventSchemas.map(constOf) as readonly SessionEventType[];
