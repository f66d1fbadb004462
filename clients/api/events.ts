/**
 * Server-sent events for Node clients: the `eventsource` package (the browser's EventSource API) with the bearer
 * token added to each request. It reconnects by itself with `Last-Event-ID`, so a dropped connection or a daemon
 * restart resumes exactly where the client was; `onState` tells the user when the link is down and back.
 */
import { EventSource } from "eventsource";
import type { DaemonConnection } from "./daemon.js";

/** One frame of an agentd event stream: `type`, `sessionId`, `seq` and the event's own fields. */
export interface StreamEvent {
  type: string;
  sessionId?: string;
  seq?: number;
  [field: string]: unknown;
}

export interface Subscription {
  close(): void;
  /** The id of the last frame received (what a reconnect resumes from). */
  readonly lastEventId: string | undefined;
}

export interface SubscribeOptions {
  /** Resume after this frame id (otherwise the stream starts with the present state). */
  lastEventId?: string;
  onState?: (state: "open" | "reconnecting" | "closed") => void;
}

/** Subscribes to `/api/v1/sessions/{id}/events` (or `/sessions/events` when `sessionId` is undefined). */
export function subscribe(
  conn: Pick<DaemonConnection, "url" | "token">,
  sessionId: string | undefined,
  onEvent: (ev: StreamEvent) => void,
  opts: SubscribeOptions = {},
): Subscription {
  const path = sessionId ? `/api/v1/sessions/${encodeURIComponent(sessionId)}/events` : "/api/v1/sessions/events";
  let lastEventId = opts.lastEventId;
  const es = new EventSource(`${conn.url}${path}`, {
    fetch: (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set("authorization", `Bearer ${conn.token}`);
      if (lastEventId && !headers.has("last-event-id")) headers.set("last-event-id", lastEventId);
      return fetch(input, { ...init, headers });
    },
  });
  es.onopen = () => opts.onState?.("open");
  es.onerror = () => opts.onState?.(es.readyState === EventSource.CLOSED ? "closed" : "reconnecting");
  es.onmessage = (msg) => {
    if (msg.lastEventId) lastEventId = msg.lastEventId;
    try {
      onEvent(JSON.parse(msg.data) as StreamEvent);
    } catch {
      // a frame that is not JSON is not an agentd event; ignore it
    }
  };
  return {
    close: () => {
      es.close();
      opts.onState?.("closed");
    },
    get lastEventId() {
      return lastEventId;
    },
  };
}
