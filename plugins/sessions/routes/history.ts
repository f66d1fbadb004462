import {
  DEFAULT_HISTORY_TURNS,
  defineRoute,
  HistoryPageFields,
  MAX_SEQ,
  SessionIdParams,
  T,
} from "../../../core/index.js";
import { type SessionRouteDeps, tags } from "./shared.js";

const HistoryQuery = T.Object({
  before: T.Integer({ minimum: 0, maximum: MAX_SEQ, description: "Page strictly before this message seq" }),
  turns: T.Optional(T.Integer({ minimum: 1, maximum: 100000 })),
});

export function sessionHistoryRoute({ svc, imageUrls }: SessionRouteDeps) {
  return defineRoute({
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
  });
}
