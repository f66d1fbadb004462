import { Type as T } from "@sinclair/typebox";
import type { EventLog } from "../../core/event-log-types.js";
import type { Sandbox } from "../../core/sandbox.js";
import type { SessionService } from "../../core/session-service.js";
import type { StoreStatus, TurnOwnership } from "../../core/store.js";
import { SessionEventSchema } from "../../core/wire-events.js";
import type { PluginStatus } from "../loader.js";

export interface HostInfo {
  pid: number;
  instanceId: string;
  version: string;
  startedAt: string;
  foreground: boolean;
  address(): { host: string; port: number; url: string } | undefined;
  plugins(): PluginStatus[];
  openApi(): Record<string, unknown>;
  sseClients(): number;
  sseQueuedBytes(): number;
  database(): StoreStatus;
  /** The team of daemons on the store's database, when it is shared (PostgreSQL). */
  team(): TurnOwnership | undefined;
}

/** What the host's routes use. */
export interface HostRouteDeps {
  info: HostInfo;
  sessions: () => SessionService;
  log: () => EventLog;
  /** How many turns run now. */
  running: () => number;
  /** The sandbox plugin's service (undefined without the plugin). */
  sandbox: () => Sandbox | undefined;
}

/**
 * EventSource cannot send headers: the two event streams also take the access token, and the first connection's
 * resume point, in the query.
 */
export const TokenQuery = T.Object({
  token: T.Optional(
    T.String({
      maxLength: 1000,
      description:
        "The access token, for clients that cannot send an Authorization header (EventSource); loopback peers only",
    }),
  ),
  lastEventId: T.Optional(
    T.String({
      maxLength: 20,
      description:
        "Resume after this event, like the Last-Event-ID header (which wins when both are sent): a client that read " +
        "the session (its lastSeq) opens the stream from there, so nothing between the read and the stream is missed",
    }),
  ),
});

export const EventStreamResponse = {
  description:
    "text/event-stream of SessionEvent frames (`id: <seq>` + one-line JSON `data:`; " +
    "each frame is one of `#/components/schemas/SessionEvent`, discriminated by `type`)",
  contentType: "text/event-stream",
  schema: SessionEventSchema,
};
