import {
  type AnyRoute,
  ApiError,
  defineRoute,
  OkSchema,
  SessionIdParams,
  type SessionService,
  T,
  type TurnManager,
} from "../../core/index.js";
import type { ControlReply } from "./control.js";
import type { TeamTurns } from "./team.js";

const MAX_IMAGES = 6;
const MAX_IMAGE_CHARS = 4 * 1024 * 1024;

const ChatRequest = T.Object(
  {
    text: T.Optional(T.String({ maxLength: 1_000_000 })),
    images: T.Optional(
      T.Array(
        T.String({
          pattern: "^data:image/[a-zA-Z0-9.+-]+;base64,",
          maxLength: MAX_IMAGE_CHARS,
          description: "A complete data URL",
        }),
        {
          maxItems: MAX_IMAGES,
        },
      ),
    ),
    clientMessageId: T.Optional(T.String({ minLength: 1, maxLength: 200, description: "De-duplicates retried POSTs" })),
    goal: T.Optional(
      T.Union([T.Boolean(), T.Integer({ minimum: 1, maximum: 200 })], {
        description: "Iteration budget for this turn (true = 25)",
      }),
    ),
  },
  { title: "ChatRequest", additionalProperties: false },
);

const MessageRequest = T.Object(
  {
    message: T.String({ minLength: 1, maxLength: 1_000_000 }),
    clientMessageId: T.Optional(T.String({ minLength: 1, maxLength: 200 })),
  },
  { title: "MessageRequest", additionalProperties: false },
);

const Accepted = T.Object(
  {
    ok: T.Literal(true),
    status: T.Union([T.Literal("started"), T.Literal("steered"), T.Literal("queued"), T.Literal("duplicate")], {
      description:
        "started: a new turn; steered: injected into the running turn; queued: runs after it; duplicate: clientMessageId already accepted",
    }),
  },
  { title: "TurnAccepted" },
);

const RememberSchema = T.Object(
  {
    scope: T.Union([T.Literal("session"), T.Literal("project"), T.Literal("global")]),
    pattern: T.Optional(
      T.String({
        minLength: 1,
        maxLength: 1000,
        description: "The rule's pattern; default the event's suggestedRule (send a narrower one to narrow it)",
      }),
    ),
  },
  {
    title: "RememberDecision",
    additionalProperties: false,
    description: "Saves the answer as a rule (allow, or deny when `allow` is false) before it is applied",
  },
);

/**
 * The turn routes. The controls (chat, steer, follow-up, abort, confirmations, questions, mode, plan transitions)
 * go through `team`: carried out here, or on the daemon that runs the session's turn (a team on one database).
 */
export function agentRoutes(svc: () => SessionService, turns: () => TurnManager, team: TeamTurns): AnyRoute[] {
  const tags = ["turns"];
  const idle = (id: string, what: string) => {
    if (team.status(id) === "running")
      throw ApiError.conflict(`A turn is running; abort it before ${what}`, { code: "turn_running" });
  };
  return [
    defineRoute({
      method: "POST",
      path: "/sessions/:id/chat",
      operationId: "chat",
      summary: "Send a message: starts a turn (202), or is steered into the running one",
      tags,
      params: SessionIdParams,
      body: ChatRequest,
      bodyLimit: MAX_IMAGES * MAX_IMAGE_CHARS + 2 * 1024 * 1024,
      errors: [500],
      responses: { 202: Accepted },
      handler: async ({ params, body }) => {
        const rec = await svc().require(params.id);
        const text = body.text?.trim() ?? "";
        if (!text && !body.images?.length) throw ApiError.badRequest("Empty message: give text or images");
        const budget = body.goal === true ? 25 : typeof body.goal === "number" ? body.goal : undefined;
        const clientMessageId = body.clientMessageId?.trim();
        const input = { text, ...(body.images ? { images: body.images } : {}) };
        return reply(
          await team.control(
            params.id,
            "chat",
            {
              ...input,
              ...(clientMessageId ? { clientMessageId } : {}),
              ...(budget !== undefined ? { budget } : {}),
            },
            rec,
          ),
        );
      },
    }),
    defineRoute({
      method: "POST",
      path: "/sessions/:id/abort",
      operationId: "abort",
      summary: "Abort the running turn (ends with reason aborted; queues cleared). 200 also when idle",
      tags,
      params: SessionIdParams,
      responses: { 200: OkSchema },
      handler: async ({ params }) => {
        await svc().require(params.id);
        return reply(await team.control(params.id, "abort", {}));
      },
    }),
    ...(["steer", "followup"] as const).map((kind) =>
      defineRoute({
        method: "POST",
        path: `/sessions/:id/${kind}`,
        operationId: kind,
        summary:
          kind === "steer"
            ? "Inject a message before the next model call (starts a turn when idle)"
            : "Queue a message to run after the current turn (starts a turn when idle)",
        tags,
        params: SessionIdParams,
        body: MessageRequest,
        responses: { 202: Accepted },
        handler: async ({ params, body }) => {
          const rec = await svc().require(params.id);
          const text = body.message.trim();
          if (!text) throw ApiError.badRequest("Empty message");
          const clientMessageId = body.clientMessageId?.trim();
          const payload = { text, ...(clientMessageId ? { clientMessageId } : {}) };
          return reply(await team.control(params.id, kind, payload, rec));
        },
      }),
    ),
    defineRoute({
      method: "POST",
      path: "/sessions/:id/question",
      operationId: "answerQuestion",
      summary: "Answer the pending question (one entry per question; a list for multi-select)",
      tags,
      params: SessionIdParams,
      body: T.Object(
        {
          values: T.Array(
            T.Union([T.String({ maxLength: 10_000 }), T.Array(T.String({ maxLength: 1000 }), { maxItems: 10 })]),
            { minItems: 1, maxItems: 5 },
          ),
        },
        { title: "QuestionAnswer", additionalProperties: false },
      ),
      errors: [409],
      responses: { 202: OkSchema },
      handler: async ({ params, body }) => {
        await svc().require(params.id);
        return reply(await team.control(params.id, "question", body));
      },
    }),
    defineRoute({
      method: "POST",
      path: "/sessions/:id/bash-confirm",
      operationId: "confirmCommand",
      summary:
        "Allow or block a command announced by a bash_confirm event, optionally remembering the answer as a rule",
      tags,
      params: SessionIdParams,
      body: T.Object(
        { id: T.String({ minLength: 1, maxLength: 100 }), allow: T.Boolean(), remember: T.Optional(RememberSchema) },
        { title: "CommandConfirmation", additionalProperties: false },
      ),
      errors: [409],
      responses: { 202: OkSchema },
      handler: async ({ params, body }) => {
        const rec = await svc().require(params.id);
        return reply(await team.control(params.id, "confirm", body, rec));
      },
    }),
    defineRoute({
      method: "POST",
      path: "/sessions/:id/editor",
      operationId: "attachEditor",
      summary: "Attach the user's editor: the file tools read and write through it (editor_fs_request events)",
      description:
        "For editor clients (agentd acp) whose editor offers its file system. While attached, read/edit see the " +
        "editor's buffers and write/edit go through it: each access is an `editor_fs_request {id, op, path, " +
        "content?}` event answered with POST /sessions/{id}/editor/reply. An editor that does not answer within " +
        "30 s is detached and the disk is used again. Both flags false detaches.",
      tags,
      params: SessionIdParams,
      body: T.Object(
        { readTextFile: T.Boolean(), writeTextFile: T.Boolean() },
        { title: "EditorAttachRequest", additionalProperties: false },
      ),
      responses: { 200: OkSchema },
      handler: async ({ params, body }) => {
        await svc().require(params.id);
        turns().editors.attach(params.id, body);
        return { body: { ok: true as const } };
      },
    }),
    defineRoute({
      method: "DELETE",
      path: "/sessions/:id/editor",
      operationId: "detachEditor",
      summary: "Detach the editor; the file tools use the disk again (200 also when none is attached)",
      tags,
      params: SessionIdParams,
      responses: { 200: OkSchema },
      handler: async ({ params }) => {
        await svc().require(params.id);
        turns().editors.detach(params.id);
        return { body: { ok: true as const } };
      },
    }),
    defineRoute({
      method: "POST",
      path: "/sessions/:id/editor/reply",
      operationId: "replyEditorRequest",
      summary: "Answer an editor_fs_request: the file's text for a read, nothing for a write, or the editor's error",
      tags,
      params: SessionIdParams,
      body: T.Object(
        {
          id: T.String({ minLength: 1, maxLength: 100 }),
          content: T.Optional(T.String({ maxLength: 50 * 1024 * 1024 })),
          error: T.Optional(T.String({ maxLength: 10_000 })),
        },
        { title: "EditorReply", additionalProperties: false },
      ),
      bodyLimit: 52 * 1024 * 1024,
      errors: [409],
      responses: { 202: OkSchema },
      handler: async ({ params, body }) => {
        await svc().require(params.id);
        turns().editors.answer(params.id, body.id, body);
        return { status: 202, body: { ok: true as const } };
      },
    }),
    defineRoute({
      method: "POST",
      path: "/sessions/:id/mode",
      operationId: "setMode",
      summary: "Switch between build and plan mode (refused while a turn runs)",
      tags,
      params: SessionIdParams,
      body: T.Object(
        { mode: T.Union([T.Literal("plan"), T.Literal("build")]) },
        { title: "ModeRequest", additionalProperties: false },
      ),
      errors: [409],
      responses: {
        200: T.Object(
          { ok: T.Literal(true), mode: T.Union([T.Literal("plan"), T.Literal("build")]) },
          { title: "ModeResult" },
        ),
      },
      handler: async ({ params, body }) => {
        await svc().require(params.id);
        return reply(await team.control(params.id, "mode", body));
      },
    }),
    defineRoute({
      method: "POST",
      path: "/sessions/:id/clean-context",
      operationId: "cleanContext",
      summary: "Clear the in-context working set; the visible history stays",
      tags,
      params: SessionIdParams,
      errors: [409],
      responses: {
        200: T.Object({ ok: T.Literal(true), originalTask: T.Optional(T.String()) }, { title: "CleanContextResult" }),
      },
      handler: async ({ params }) => ({
        body: {
          ok: true as const,
          ...(await svc().cleanContext(params.id, () => idle(params.id, "cleaning the context"))),
        },
      }),
    }),
    defineRoute({
      method: "POST",
      path: "/sessions/:id/plan-transition",
      operationId: "planTransition",
      summary: "Accept the finished plan (its open steps become todos), or keep planning",
      description:
        "`done` accepts the plan: its open steps become the session's todos. `continue` declines the choice for " +
        "now: the session stays in plan mode and the pending choice is cleared for every client (the plan file " +
        "is kept; the next plan_done asks again). Either way a `decision_state` event without `planTransition` " +
        "follows, and the session's summary no longer carries `waiting: plan`.",
      tags,
      params: SessionIdParams,
      body: T.Object(
        { kind: T.Union([T.Literal("done"), T.Literal("continue")]) },
        { title: "PlanTransitionRequest", additionalProperties: false },
      ),
      errors: [409],
      responses: { 202: OkSchema },
      handler: async ({ params, body }) => {
        const rec = await svc().require(params.id);
        return reply(await team.control(params.id, "plan", body, rec));
      },
    }),
  ];
}

/** A control's reply as the route answers it (its schema is the route's response). */
function reply(r: ControlReply): { status: number; body: never } {
  return { status: r.status, body: r.body as never };
}
