import type { Disposable } from "../../core/disposable.js";
import type { SessionEventLog } from "../../core/event-log.js";
import type { SseStream } from "../../core/routes.js";
import type { StoredEvent } from "../../core/session-types.js";
import type { SessionService } from "../../core/sessions.js";

/** Replay reads in pages of this many events. */
const REPLAY_PAGE = 500;
/** A client further behind than this is told to resync (reload the session) rather than replayed. */
const MAX_REPLAY = 100_000;

interface Cursor {
  /** The last seq the client has (or was told to skip to). */
  delivered: number;
  /** True while the client is being fed from the log instead of live frames. */
  catchingUp: boolean;
}

/**
 * Feeds one client from a sequenced log: live frames while it keeps up; when its bounded queue is full, it is
 * caught up from the store once it drains, so a slow client costs the daemon at most its queue bound and still
 * sees every event exactly once and in order.
 */
function follow(
  stream: SseStream,
  cursor: Cursor,
  readAfter: (seq: number, limit: number) => StoredEvent[],
  subscribe: (fn: (seq: number, json: string) => void) => Disposable,
  isTerminal: (json: string) => boolean,
): void {
  const deliver = (seq: number, json: string): boolean => {
    if (!stream.send(json, seq)) return false;
    cursor.delivered = seq;
    if (isTerminal(json)) stream.close();
    return true;
  };
  const catchUp = () => {
    if (stream.closed) return;
    for (;;) {
      const page = readAfter(cursor.delivered, REPLAY_PAGE);
      for (const ev of page) {
        if (!deliver(ev.seq, ev.json)) {
          stream.onDrain(catchUp);
          return;
        }
        if (stream.closed) return;
      }
      if (page.length < REPLAY_PAGE) break;
    }
    cursor.catchingUp = false;
  };
  const sub = subscribe((seq, json) => {
    if (cursor.catchingUp || seq <= cursor.delivered) return;
    if (!deliver(seq, json)) {
      cursor.catchingUp = true;
      stream.onDrain(catchUp);
    }
  });
  stream.onClose(() => sub.dispose());
  if (cursor.catchingUp) catchUp();
}

function parseLastEventId(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  return /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
}

/** Decides where a (re)connecting client starts, sending `resync` when its Last-Event-ID cannot be honoured. */
function startCursor(stream: SseStream, current: number, extra: Record<string, unknown>): Cursor {
  const last = parseLastEventId(stream.lastEventId);
  if (last === undefined) return { delivered: current, catchingUp: false };
  let reason: string | undefined;
  if (Number.isNaN(last)) reason = "Last-Event-ID is not a sequence number of this stream";
  else if (last > current) reason = "Last-Event-ID is newer than this stream (daemon data was reset)";
  else if (current - last > MAX_REPLAY) reason = "too many events were missed to replay";
  if (reason) {
    stream.send(JSON.stringify({ type: "resync", reason, lastSeq: current, ...extra }));
    return { delivered: current, catchingUp: false };
  }
  return { delivered: last, catchingUp: true };
}

export function streamSession(
  stream: SseStream,
  sessionId: string,
  sessions: SessionService,
  log: SessionEventLog,
): void {
  // Snapshot, replay and subscription happen in one synchronous run: no event can slip in between.
  const status = sessions.statusFrame(sessionId);
  stream.send(JSON.stringify(status));
  const cursor = startCursor(stream, log.currentSeq(sessionId), { sessionId });
  follow(
    stream,
    cursor,
    (after, limit) => log.replay(sessionId, after, limit),
    (fn) => log.subscribe(sessionId, fn),
    (json) => json.startsWith('{"type":"session_closed"'),
  );
}

export function streamFeed(stream: SseStream, log: SessionEventLog): void {
  const current = log.feedSeq();
  stream.send(JSON.stringify({ type: "connected", lastSeq: current }));
  const cursor = startCursor(stream, current, {});
  follow(
    stream,
    cursor,
    (after, limit) => log.replayFeed(after, limit),
    (fn) => log.subscribeFeed(fn),
    () => false,
  );
}
