import { DEFAULT_HISTORY_TURNS, defineRoute, SessionIdParams, SessionSchema, T } from "../../../core/index.js";
import { type SessionRouteDeps, tags } from "./shared.js";

const TurnsQuery = T.Object({
  turns: T.Optional(
    T.Integer({ minimum: 1, maximum: 100000, description: `User turns of history (default ${DEFAULT_HISTORY_TURNS})` }),
  ),
});

export function getSessionRoute({ svc, imageUrls }: SessionRouteDeps) {
  return defineRoute({
    method: "GET",
    path: "/sessions/:id",
    operationId: "getSession",
    summary: "A session with its recent history, live streaming blocks and pending decisions",
    tags,
    params: SessionIdParams,
    query: TurnsQuery,
    responses: { 200: SessionSchema },
    handler: async ({ params, query, apiBase }) => {
      const turns = query.turns ?? DEFAULT_HISTORY_TURNS;
      // A long session read whole comes serialised, a page at a time (SessionService.wholeView).
      const whole = await svc().wholeView(params.id, turns, imageUrls(apiBase));
      if (whole !== undefined) return { bytes: whole, contentType: "application/json; charset=utf-8" };
      return { body: await svc().view(params.id, turns, imageUrls(apiBase)) };
    },
  });
}
