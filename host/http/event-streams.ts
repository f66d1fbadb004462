import type { Disposable } from "../../core/disposable.js";
import type { EventLog } from "../../core/event-log-types.js";
import type { SseStream } from "../../core/routes.js";
import type { SessionService } from "../../core/session-service.js";
import type { StoredEvent } from "../../core/session-types.js";

/** Replay reads in pages of at most this many events. */
const REPLAY_PAGE = 500;
/** ...and at least this many: after a client's queue filled, the next page is about what it took (see follow). */
const MIN_PAGE = 16;
/** A client further behind than this is told to resync (reload the session) rather than replayed. */
const MAX_REPLAY = 100_000;

interface Cursor {
  /** The last seq the client has (or was told to skip to). */
  delivered: number;
  /** True while the client is being fed from the log instead of live frames. */
  catchingUp: boolean;
}

/**
 * Feeds one client from a sequenced log: live frames while it keeps up; when it is behind (a Last-Event-ID to
 * replay, or a full queue), it is caught up from the store, so a slow client costs the daemon at most its queue
 * bound and still sees every event exactly once and in order.
 *
 * Reads from the store may answer later than the events they return were published: while a read is out, new live
 * frames are not sent (the client is still catching up), and a read that comes back short is followed by another
 * while the log has moved past what the read covered. Only when a read covers the whole log does the client go
 * back to live frames, in the same synchronous run, so nothing can slip in between.
 */
function follow(
  stream: SseStream,
  cursor: Cursor,
  log: {
    current(): number;
    readAfter(seq: number, limit: number): Promise<StoredEvent[]>;
    subscribe(fn: (seq: number, json: string) => void): Disposable;
  },
  isTerminal: (json: string) => boolean,
): Promise<void> {
  let reading = false;
  // A page is cut short when the client's queue fills; the next read asks for about what it took then, so a client
  // that takes few large frames at a time is not fed from pages read whole and mostly dropped.
  let pageSize = REPLAY_PAGE;
  const deliver = (seq: number, json: string): boolean => {
    if (!stream.send(json, seq)) return false;
    cursor.delivered = seq;
    if (isTerminal(json)) stream.close();
    return true;
  };
  /** Rejects when a read fails; the stream is closed then (the client reconnects and is replayed). */
  const catchUp = async (): Promise<void> => {
    if (reading) return;
    reading = true;
    try {
      for (;;) {
        if (stream.closed) return;
        // Everything up to `covered` is written before the read is made (the log flushes first).
        const covered = cursor.delivered >= log.current() ? cursor.delivered : log.current();
        const asked = pageSize;
        const page = await log.readAfter(cursor.delivered, asked);
        let sent = 0;
        for (const ev of page) {
          if (ev.seq <= cursor.delivered) continue;
          if (!deliver(ev.seq, ev.json)) {
            pageSize = Math.min(REPLAY_PAGE, Math.max(MIN_PAGE, 2 * sent));
            stream.onDrain(resume);
            return;
          }
          sent++;
          if (stream.closed) return;
        }
        if (page.length === asked) {
          pageSize = Math.min(REPLAY_PAGE, 2 * asked);
          continue;
        }
        // Numbers up to `covered` that the read did not return were never stored (a failed write): skip them.
        if (covered > cursor.delivered) cursor.delivered = covered;
        if (log.current() > cursor.delivered) continue;
        cursor.catchingUp = false;
        return;
      }
    } catch (err) {
      stream.close();
      throw err;
    } finally {
      reading = false;
    }
  };
  const resume = () => void catchUp().catch(() => {});
  const sub = log.subscribe((seq, json) => {
    if (cursor.catchingUp || seq <= cursor.delivered) return;
    if (!deliver(seq, json)) {
      cursor.catchingUp = true;
      stream.onDrain(resume);
    }
  });
  stream.onClose(() => sub.dispose());
  return cursor.catchingUp ? catchUp() : Promise.resolve();
}

function parseLastEventId(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  return /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
}

/**
 * Decides where a (re)connecting client starts, sending `resync` when its Last-Event-ID cannot be honoured.
 * `from`: the sequence number the client's first frame describes; `current`: the log's last one now (a client
 * without Last-Event-ID is caught up from `from` when events came in between).
 */
function startCursor(stream: SseStream, from: number, current: number, extra: Record<string, unknown>): Cursor {
  const last = parseLastEventId(stream.lastEventId);
  if (last === undefined) return { delivered: from, catchingUp: current > from };
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

export async function streamSession(
  stream: SseStream,
  sessionId: string,
  sessions: SessionService,
  log: EventLog,
): Promise<void> {
  // The first frame describes the session as of its `lastSeq`; whatever was published after that is replayed.
  await log.numbered();
  const status = await sessions.statusFrame(sessionId);
  if (stream.closed) return;
  stream.send(JSON.stringify(status));
  const cursor = startCursor(stream, status.lastSeq, log.currentSeq(sessionId), { sessionId });
  await follow(
    stream,
    cursor,
    {
      current: () => log.currentSeq(sessionId),
      readAfter: (after, limit) => log.replay(sessionId, after, limit),
      subscribe: (fn) => log.subscribe(sessionId, fn),
    },
    (json) => json.startsWith('{"type":"session_closed"'),
  );
}

export async function streamFeed(stream: SseStream, log: EventLog): Promise<void> {
  await log.numbered();
  if (stream.closed) return;
  const current = log.feedSeq();
  stream.send(JSON.stringify({ type: "connected", lastSeq: current }));
  const cursor = startCursor(stream, current, current, {});
  return follow(
    stream,
    cursor,
    {
      current: () => log.feedSeq(),
      readAfter: (after, limit) => log.replayFeed(after, limit),
      subscribe: (fn) => log.subscribeFeed(fn),
    },
    () => false,
  );
}
