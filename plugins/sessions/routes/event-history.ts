import { defineRoute, MAX_SEQ, SessionIdParams, T } from "../../../core/index.js";
import type { SessionRouteDeps } from "./shared.js";

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

export function eventHistoryRoute({ svc, store }: SessionRouteDeps) {
  return defineRoute({
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
      const rows = await store().readEvents(params.id, query.after ?? 0, query.limit ?? AUDIT_PAGE, {
        durableOnly: true,
      });
      return {
        body: { events: rows.map((r) => ({ seq: r.seq, ts: r.ts, type: r.type, payload: JSON.parse(r.json) })) },
      };
    },
  });
}
