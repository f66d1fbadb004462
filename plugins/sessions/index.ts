import {
  type AnyRoute,
  DEFAULT_HISTORY_TURNS,
  definePlugin,
  defineRoute,
  HistoryPageFields,
  MAX_SEQ,
  MessageImagesToken,
  messageImageUrls,
  OkSchema,
  optional,
  SessionIdParams,
  type SessionRecord,
  SessionSchema,
  type SessionService,
  SessionServiceToken,
  SessionStoreToken,
  SessionSummarySchema,
  T,
} from "../../core/index.js";

import { transferRoutes } from "./transfer-routes.js";

const CreateSessionRequest = T.Object(
  {
    persona: T.Optional(T.String({ minLength: 1, maxLength: 100, description: "Persona name (404 when unknown)" })),
    model: T.Optional(T.String({ minLength: 1, maxLength: 200 })),
    cwd: T.Optional(
      T.String({
        minLength: 1,
        maxLength: 4096,
        description: 'Absolute existing directory, or "sandbox" for a scratch one',
      }),
    ),
    title: T.Optional(T.String({ maxLength: 200 })),
    worktree: T.Optional(
      T.Union(
        [
          T.Boolean(),
          T.Object(
            {
              branch: T.Optional(
                T.String({
                  minLength: 1,
                  maxLength: 200,
                  description: "Default agentd/<session id>; 400 if it exists",
                }),
              ),
              base: T.Optional(
                T.String({
                  minLength: 1,
                  maxLength: 200,
                  description: "Branch or commit to start from (default HEAD)",
                }),
              ),
            },
            { additionalProperties: false },
          ),
        ],
        {
          description:
            "Work in a new git worktree of cwd's repository, on a new branch (400 outside git, for a branch git " +
            "refuses or one that exists; nothing is created then)",
        },
      ),
    ),
  },
  { title: "CreateSessionRequest", additionalProperties: false },
);

const CreateSessionResponse = T.Object(
  { id: T.String(), session: SessionSummarySchema },
  { title: "CreateSessionResponse" },
);

export const ForkSessionResponse = T.Object(
  {
    id: T.String({ description: "The new session's id" }),
    session: SessionSchema,
  },
  { title: "ForkSessionResponse", description: "The new session in full, as GET /sessions/{id} returns it" },
);

const SessionPage = T.Object(
  {
    sessions: T.Array(SessionSummarySchema),
    total: T.Integer(),
    limit: T.Integer(),
    offset: T.Integer(),
  },
  { title: "SessionPage" },
);

const ListQuery = T.Object({
  q: T.Optional(T.String({ maxLength: 500, description: "Text search over titles and message text" })),
  limit: T.Optional(T.Integer({ minimum: 1, maximum: 200, description: "Page size (default 50)" })),
  offset: T.Optional(T.Integer({ minimum: 0, maximum: MAX_SEQ, description: "Default 0" })),
});

const TurnsQuery = T.Object({
  turns: T.Optional(
    T.Integer({ minimum: 1, maximum: 100000, description: `User turns of history (default ${DEFAULT_HISTORY_TURNS})` }),
  ),
});

const HistoryQuery = T.Object({
  before: T.Integer({ minimum: 0, maximum: MAX_SEQ, description: "Page strictly before this message seq" }),
  turns: T.Optional(T.Integer({ minimum: 1, maximum: 100000 })),
});

const StoredEventSchema = T.Object(
  {
    seq: T.Integer(),
    ts: T.String({ format: "date-time" }),
    type: T.String(),
    payload: T.Object({}, { additionalProperties: true, description: "The event as it went on the wire" }),
  },
  { title: "AuditEvent" },
);

const AUDIT_PAGE = 10_000;

/** Session lifecycle and metadata routes (the turn routes belong to the agent loop plugin). */
export default definePlugin({
  manifest: {
    id: "sessions",
    version: "1.0.0",
    description: "Session lifecycle, metadata, history and the event audit trail",
    capabilities: ["routes"],
  },
  deps: {
    sessions: SessionServiceToken,
    store: SessionStoreToken,
    images: optional(MessageImagesToken),
  },
  register(ctx) {
    const svc = (): SessionService => ctx.deps.sessions;
    // Stored images link to whichever plugin serves them (the files plugin); without one they are left out.
    const imageUrls = (apiBase: string) => messageImageUrls(ctx.deps.images, apiBase);
    const created = (rec: SessionRecord) => ({ status: 201, body: { id: rec.id, session: svc().summary(rec) } });
    const tags = ["sessions"];
    const routes: AnyRoute[] = [
      defineRoute({
        method: "GET",
        path: "/sessions",
        operationId: "listSessions",
        summary: "List sessions: a plain array, or a page when limit or offset is given",
        tags,
        query: ListQuery,
        responses: { 200: T.Union([T.Array(SessionSummarySchema), SessionPage]) },
        handler: async ({ query }) => {
          const q = query.q?.trim() || undefined;
          if (query.limit === undefined && query.offset === undefined) {
            return { body: (await svc().list({ q })).sessions };
          }
          const limit = query.limit ?? 50;
          const offset = query.offset ?? 0;
          const { sessions, total } = await svc().list({ q, limit, offset });
          return { body: { sessions, total, limit, offset } };
        },
      }),
      defineRoute({
        method: "POST",
        path: "/sessions",
        operationId: "createSession",
        summary: "Create a session (persisted at once)",
        tags,
        body: CreateSessionRequest,
        bodyRequired: false,
        responses: { 201: CreateSessionResponse },
        handler: async ({ body }) => created(await svc().create(body ?? {})),
      }),
      defineRoute({
        method: "GET",
        path: "/sessions/:id",
        operationId: "getSession",
        summary: "A session with its recent history, live streaming blocks and pending decisions",
        tags,
        params: SessionIdParams,
        query: TurnsQuery,
        responses: { 200: SessionSchema },
        handler: async ({ params, query, apiBase }) => ({
          body: await svc().view(params.id, query.turns ?? DEFAULT_HISTORY_TURNS, imageUrls(apiBase)),
        }),
      }),
      defineRoute({
        method: "GET",
        path: "/sessions/:id/history",
        operationId: "getSessionHistory",
        summary: "An older page of history, strictly before a message seq",
        tags,
        params: SessionIdParams,
        query: HistoryQuery,
        responses: { 200: T.Object(HistoryPageFields, { title: "HistoryPage" }) },
        handler: async ({ params, query, apiBase }) => ({
          body: await svc().history(params.id, query.before, query.turns ?? DEFAULT_HISTORY_TURNS, imageUrls(apiBase)),
        }),
      }),
      defineRoute({
        method: "DELETE",
        path: "/sessions/:id",
        operationId: "unloadSession",
        summary: "Unload a session: ends its running turn and closes its streams; stored data is kept",
        tags,
        params: SessionIdParams,
        responses: { 200: OkSchema },
        handler: async ({ params }) => {
          await svc().unload(params.id);
          return { body: { ok: true as const } };
        },
      }),
      defineRoute({
        method: "DELETE",
        path: "/sessions/:id/permanent",
        operationId: "deleteSession",
        summary: "Delete a session and everything stored for it",
        tags,
        params: SessionIdParams,
        responses: { 200: OkSchema },
        handler: async ({ params }) => {
          await svc().deletePermanently(params.id);
          return { body: { ok: true as const } };
        },
      }),
      defineRoute({
        method: "POST",
        path: "/sessions/:id/fork",
        operationId: "forkSession",
        summary: "Fork an idle session: a new session with the context currently sent to the model",
        tags,
        params: SessionIdParams,
        errors: [409],
        responses: { 201: ForkSessionResponse },
        handler: async ({ params, apiBase }) => {
          const fork = await svc().fork(params.id);
          return {
            status: 201,
            body: { id: fork.id, session: await svc().view(fork.id, DEFAULT_HISTORY_TURNS, imageUrls(apiBase)) },
          };
        },
      }),
      defineRoute({
        method: "POST",
        path: "/sessions/:id/rename",
        operationId: "renameSession",
        summary: "Rename a session (trimmed, at most 200 characters; empty clears the title)",
        tags,
        params: SessionIdParams,
        body: T.Object({ title: T.String({ maxLength: 10_000 }) }, { additionalProperties: false }),
        responses: { 200: T.Object({ ok: T.Literal(true), title: T.String() }, { title: "RenameResult" }) },
        handler: async ({ params, body }) => ({
          body: { ok: true as const, title: (await svc().rename(params.id, body.title)).title ?? "" },
        }),
      }),
      defineRoute({
        method: "POST",
        path: "/sessions/:id/pin",
        operationId: "pinSession",
        summary: "Pin or unpin a session",
        tags,
        params: SessionIdParams,
        body: T.Object({ pinned: T.Boolean() }, { additionalProperties: false }),
        responses: { 200: T.Object({ ok: T.Literal(true), pinned: T.Boolean() }, { title: "PinResult" }) },
        handler: async ({ params, body }) => ({
          body: { ok: true as const, pinned: (await svc().setPinned(params.id, body.pinned)).pinned },
        }),
      }),
      defineRoute({
        method: "POST",
        path: "/sessions/:id/share",
        operationId: "shareSession",
        summary: "Create (or return) the read-only share link of a session",
        description:
          "Optional body: toolResults (default false) shows tool results (file contents, command output) on the " +
          "page; given for a link that exists, it changes what that page shows.",
        tags,
        params: SessionIdParams,
        body: T.Object(
          { toolResults: T.Optional(T.Boolean({ description: "Show tool results on the page (default false)" })) },
          { additionalProperties: false, title: "ShareRequest" },
        ),
        bodyRequired: false,
        responses: {
          200: T.Object(
            {
              ok: T.Literal(true),
              token: T.String(),
              url: T.String({ description: "Relative URL of the public page" }),
            },
            { title: "ShareLink" },
          ),
        },
        handler: async ({ params, body }) => {
          const token = await svc().share(params.id, { toolResults: body?.toolResults });
          return { body: { ok: true as const, token, url: `/shared/${token}` } };
        },
      }),
      defineRoute({
        method: "DELETE",
        path: "/sessions/:id/share",
        operationId: "unshareSession",
        summary: "Revoke the share link (200 with ok even when the session was not shared)",
        tags,
        params: SessionIdParams,
        responses: { 200: T.Object({ ok: T.Boolean() }, { title: "RevokeShareResult" }) },
        handler: async ({ params }) => {
          await svc().unshare(params.id);
          return { body: { ok: true as const } };
        },
      }),
      defineRoute({
        method: "GET",
        path: "/sessions/:id/events/history",
        operationId: "getSessionEventHistory",
        summary: "The session's durable event audit trail (deltas are not part of it)",
        tags: ["events"],
        params: SessionIdParams,
        query: T.Object({
          after: T.Optional(T.Integer({ minimum: 0, maximum: MAX_SEQ, description: "Only events with seq > after" })),
          limit: T.Optional(T.Integer({ minimum: 1, maximum: AUDIT_PAGE })),
        }),
        responses: { 200: T.Object({ events: T.Array(StoredEventSchema) }, { title: "EventHistory" }) },
        handler: async ({ params, query }) => {
          await svc().require(params.id);
          const rows = await ctx.services
            .get(SessionStoreToken)
            .readEvents(params.id, query.after ?? 0, query.limit ?? AUDIT_PAGE, {
              durableOnly: true,
            });
          return {
            body: { events: rows.map((r) => ({ seq: r.seq, ts: r.ts, type: r.type, payload: JSON.parse(r.json) })) },
          };
        },
      }),
    ];
    routes.push(...transferRoutes(svc, () => ctx.deps.store, imageUrls));
    for (const r of routes) ctx.routes.add(r);
  },
});
