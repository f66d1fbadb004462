import { defineRoute } from "../../core/routes.js";
import { streamFeed } from "../http/event-streams.js";
import { EventStreamResponse, type HostRouteDeps, TokenQuery } from "./shared.js";

export function sessionFeedRoute({ log }: HostRouteDeps) {
  return defineRoute({
    method: "GET",
    path: "/sessions/events",
    operationId: "streamAllSessions",
    summary: "Server-sent events for all sessions: session_created, session_update, session_deleted",
    tags: ["events"],
    query: TokenQuery,
    queryToken: true,
    responses: { 200: EventStreamResponse },
    handler: () => ({ sse: (stream) => streamFeed(stream, log()) }),
  });
}
