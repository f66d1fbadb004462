import { defineRoute, MAX_SEQ, SessionSummarySchema, T } from "../../../core/index.js";
import { type SessionRouteDeps, tags } from "./shared.js";

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

export function listSessionsRoute({ svc }: SessionRouteDeps) {
  return defineRoute({
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
        // Every session: the text comes serialised (SessionService.listAllJson), the summaries of unchanged ones kept.
        if (!q) return { bytes: await svc().listAllJson(), contentType: "application/json; charset=utf-8" };
        return { body: (await svc().list({ q })).sessions };
      }
      const limit = query.limit ?? 50;
      const offset = query.offset ?? 0;
      const { sessions, total } = await svc().list({ q, limit, offset });
      return { body: { sessions, total, limit, offset } };
    },
  });
}
