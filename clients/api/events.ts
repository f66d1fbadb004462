/**
 * Server-sent events for Node clients: the `eventsource` package (the browser's EventSource API) with the bearer
 * token added to each request. It reconnects by itself with `Last-Event-ID`, so a dropped connection or a daemon
 * restart resumes exactly where the client was; `onState` tells the user when the link is down and back.
 */
import { EventSource } from "eventsource";
import type { DaemonConnection } from "./daemon.js";
import type { components } from "./v1.js";

/** A frame as the OpenAPI document types it: a union discriminated by `type` (narrow with `switch (ev.type)`). */
export type SessionEvent = components["schemas"]["SessionEvent"];

/**
 * One frame of an agentd event stream: `type`, `sessionId`, `seq` and the event's own fields, loosely typed (the
 * clients read fields by name; {@link SessionEvent} is the precise, generated type of the same frames).
 */
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
  /** "reconnecting" while the link is down (it keeps trying), "open" when (re)connected, "closed" after close(). */
  onState?: (state: "open" | "reconnecting" | "closed") => void;
}

/** Subscribes to `/api/v1/sessions/{id}/events` (or `/sessions/events` when `sessionId` is undefined). */
export function subscribe(
  conn: Pick<DaemonConnection, "url" | "token"> & Partial<Pick<DaemonConnection, "refresh">>,
  sessionId: string | undefined,
  onEvent: (ev: StreamEvent) => void,
  opts: SubscribeOptions = {},
): Subscription {
  const path = sessionId ? `/api/v1/sessions/${encodeURIComponent(sessionId)}/events` : "/api/v1/sessions/events";
  let lastEventId = opts.lastEventId;
  let closed = false;
  let refreshing = false;
  let es: EventSource;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const refresh = () => {
    if (!conn.refresh || refreshing) return Promise.resolve();
    refreshing = true;
    return conn.refresh().then(
      () => {
        refreshing = false;
      },
      () => {
        refreshing = false;
      },
    );
  };
  // Each (re)connection goes to the connection's current address and token, so after `refresh` a restarted
  // daemon is followed (on another port, with a rotated token) and the stream resumes from Last-Event-ID.
  const open = () => {
    es = new EventSource(`${conn.url}${path}`, {
      fetch: (_input, init) => {
        const headers = new Headers(init?.headers);
        headers.set("authorization", `Bearer ${conn.token}`);
        if (lastEventId && !headers.has("last-event-id")) headers.set("last-event-id", lastEventId);
        return fetch(`${conn.url}${path}`, { ...init, headers });
      },
    });
    es.onopen = () => opts.onState?.("open");
    es.onerror = () => {
      if (closed) return;
      opts.onState?.("reconnecting");
      void refresh();
      // EventSource gives up on an HTTP error (a daemon shutting down answers 503): start a new one.
      if (es.readyState === EventSource.CLOSED) {
        retry = setTimeout(() => {
          if (!closed) void refresh().then(() => !closed && open());
        }, 1000);
      }
    };
    es.onmessage = (msg) => {
      if (msg.lastEventId) lastEventId = msg.lastEventId;
      try {
        onEvent(JSON.parse(msg.data) as StreamEvent);
      } catch {
        // a frame that is not JSON is not an agentd event; ignore it
      }
    };
  };
  open();
  return {
    close: () => {
      closed = true;
      if (retry) clearTimeout(retry);
      es.close();
      opts.onState?.("closed");
    },
    get lastEventId() {
      return lastEventId;
    },
  };
}
