import { defineRoute } from "../../core/routes.js";
import { SessionIdParams } from "../../core/schemas.js";
import { streamSession } from "../http/event-streams.js";
import { EventStreamResponse, type HostRouteDeps, TokenQuery } from "./shared.js";

export function sessionEventsRoute({ sessions, log }: HostRouteDeps) {
  return defineRoute({
    method: "GET",
    path: "/sessions/:id/events",
    operationId: "streamSession",
    summary: "Server-sent events of one session: a status frame, replay after Last-Event-ID, then live events",
    tags: ["events"],
    params: SessionIdParams,
    query: TokenQuery,
    queryToken: true,
    responses: { 200: EventStreamResponse },
    handler: async (req) => {
      const svc = sessions();
      await svc.require(req.params.id);
      return { sse: (stream) => streamSession(stream, req.params.id, svc, log()) };
    },
  });
}
