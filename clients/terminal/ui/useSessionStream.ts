/**
 * Opens the shown session: its history, the trust prompt, then its live event stream (the first frame carries the
 * pending decisions). Events are applied in batches, one render per batch; the link's state is told to the user.
 */
import { useEffect, useRef, useState } from "react";
import { ok, type Schemas } from "../../api/client.js";
import type { DaemonConnection } from "../../api/daemon.js";
import { type StreamEvent, type Subscription, subscribe } from "../../api/events.js";
import { loadMarkdown } from "../markdown.js";
import type { LoadedSession, SessionView } from "./store.js";

/** Events are applied in batches: one render per batch (Ink draws at most 30 frames a second anyway). */
const FLUSH_MS = 50;

type SessionDetail = Schemas["Session"];

export interface SessionStream {
  /** The session is read and its stream is opening. */
  ready: boolean;
  /** The stream's first frame (the present state) has been applied. */
  live: boolean;
  link: "open" | "reconnecting";
  /** The open stream, to close on quit. */
  sub: { current: Subscription | undefined };
}

/** Says once, at the top of a session, when the agent's commands are not confined. */
async function warnUnconfined(client: DaemonConnection["api"], store: SessionView) {
  const status = await ok(client.GET("/api/v1/server/status")).catch(() => undefined);
  const sandbox = status?.sandbox;
  if (!sandbox || sandbox.enabled) return;
  store.note(
    sandbox.kind === "off"
      ? 'sandbox off (config sandbox: "off"): commands run with all of your power'
      : `commands are NOT sandboxed (${sandbox.reason ?? "unavailable"}): each one is asked about`,
    "warn",
  );
  store.changed();
}

export function useSessionStream(opts: {
  conn: DaemonConnection;
  sessionId: string;
  store: SessionView;
  onSession(id: string): void;
  fail(e: unknown): void;
}): SessionStream {
  const { conn, sessionId, store, onSession, fail } = opts;
  const api = conn.api;
  const [ready, setReady] = useState(false);
  const [live, setLive] = useState(false);
  const [link, setLink] = useState<"open" | "reconnecting">("open");
  const sub = useRef<Subscription | undefined>(undefined);

  useEffect(() => {
    let closed = false;
    let queue: StreamEvent[] = [];
    let timer: NodeJS.Timeout | undefined;
    let wasDown = false;
    const flush = () => {
      timer = undefined;
      const batch = queue;
      queue = [];
      for (const ev of batch) {
        if (ev.type === "resync") void refresh();
        store.apply(ev);
      }
      store.changed();
    };
    const refresh = async () => {
      const s = (await ok(
        api.GET("/api/v1/sessions/{id}", { params: { path: { id: sessionId }, query: { turns: 1 } } }),
      )) as SessionDetail;
      store.running = s.status === "running";
      store.question = s.question as never;
      store.plan = s.planTransition as never;
      store.confirmations = Array.isArray(s.pendingConfirmations) ? (s.pendingConfirmations as never) : [];
      store.note("caught up with the session after a gap in the stream", "dim");
    };
    (async () => {
      setReady(false);
      setLive(false);
      onSession(sessionId);
      const s = (await ok(
        api.GET("/api/v1/sessions/{id}", { params: { path: { id: sessionId }, query: { turns: 6 } } }),
      )) as SessionDetail;
      // History is printed once: with Markdown, so wait for the renderer when there is history to print.
      if (s.messages.length > 0) await loadMarkdown().catch(() => {});
      if (closed) return;
      store.load(s as unknown as LoadedSession);
      void warnUnconfined(api, store);
      // The daemon says when the project awaits a trust decision (the first frame says it again).
      store.trustRequired = s.projectTrust
        ? { path: s.projectTrust.path, resources: s.projectTrust.resources as unknown as Record<string, string[]> }
        : undefined;
      store.changed();
      sub.current = subscribe(
        conn,
        sessionId,
        (ev) => {
          if (queue.length === 0 && !timer && ev.lastSeq !== undefined && ev.type === "status") {
            // The first frame (present state): apply at once, then let what was typed early go out.
            store.apply(ev);
            store.changed();
            setLive(true);
            return;
          }
          queue.push(ev);
          timer ??= setTimeout(flush, FLUSH_MS);
        },
        {
          // From where the session was read: what another client did in between is not missed.
          lastEventId: s.lastSeq === undefined ? undefined : String(s.lastSeq),
          onState: (state) => {
            if (state === "reconnecting" && !wasDown) {
              wasDown = true;
              setLink("reconnecting");
              store.note("connection to the daemon lost; reconnecting…", "warn");
            } else if (state === "open" && wasDown) {
              wasDown = false;
              setLink("open");
              store.note("reconnected", "ok");
            }
          },
        },
      );
      setReady(true);
    })().catch(fail);
    return () => {
      closed = true;
      if (timer) clearTimeout(timer);
      sub.current?.close();
      sub.current = undefined;
    };
  }, [sessionId, api, conn, store, fail, onSession]);

  return { ready, live, link, sub };
}
