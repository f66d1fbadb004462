import { setImmediate as nextTurn } from "node:timers/promises";
import { expect } from "chai";
import { SyncEventBus } from "../core/events.js";
import {
  ApiError,
  type EventRing,
  type SessionEvent,
  SharedEventLog,
  type SharedEvents,
  silentLogger,
} from "../core/index.js";
import { openSqliteStore, type SqliteSessionStore } from "../plugins/storage-sqlite/store.js";
import { sessionRecord } from "./support/session-record.js";

/**
 * A doorbell the test controls: rings reach each listening daemon on a later turn of the event loop, unless that
 * daemon is made deaf (its notifications lost, as when its listening connection is away).
 */
class Doorbell {
  readonly listeners: Array<(r: EventRing) => void> = [];
  readonly deaf = new Set<number>();

  ring(r: EventRing): void {
    this.listeners.forEach((fn, i) => {
      if (!this.deaf.has(i)) setImmediate(() => fn(r));
    });
  }
}

/** What a database gives the log, over one SQLite store: numbers in the append, the doorbell after it. */
function sharedOver(
  store: SqliteSessionStore,
  bell: Doorbell,
  index: number,
  db: { down: boolean; appends?: number[] } = { down: false },
): SharedEvents {
  return {
    async append(sessionId, events) {
      await nextTurn();
      if (db.down) throw new ApiError(503, "the database is away");
      db.appends?.push(events.length);
      if (sessionId === null) {
        const base = store.feedSeq();
        events.forEach((e, i) => {
          store.appendFeed({ seq: base + i + 1, ts: e.ts, type: e.type, json: e.head + (base + i + 1) + e.tail });
        });
        bell.ring({ kind: "feed", lastSeq: base + events.length });
        return base + 1;
      }
      if (!store.getSession(sessionId)) return undefined;
      const base = store.eventSeqReserved(sessionId);
      store.reserveEventSeq(sessionId, base + events.length);
      store.appendEvents(
        sessionId,
        events.map((e, i) => ({ ...e, seq: base + i + 1, json: e.head + (base + i + 1) + e.tail })),
      );
      bell.ring({ kind: "session", sessionId, lastSeq: base + events.length });
      return base + 1;
    },
    listen(ring) {
      bell.listeners[index] = ring;
      return { ready: Promise.resolve(), close: async () => {} };
    },
  };
}

/**
 * SharedEventLog, the event log of daemons that share a database, on a store and a doorbell the test drives: the
 * doorbell is only a hint, so lost, coalesced and missed-while-away notifications never cost a frame.
 */
describe("SharedEventLog: the doorbell is a hint, the rows are the truth", () => {
  const at = "2024-01-01T00:00:00.000Z";
  let store: SqliteSessionStore;
  let bell: Doorbell;
  let a: SharedEventLog;
  let b: SharedEventLog;
  let frames: { a: Array<[number, string]>; b: Array<[number, string]> };
  let db: { down: boolean; appends?: number[] };
  const notice = (message: string) => ({ type: "notice", message }) as SessionEvent;
  /** Resolves once `who`'s subscriber has `n` frames (they arrive on later turns of the event loop). */
  const until = async (who: "a" | "b", n: number) => {
    while (frames[who].length < n) await nextTurn();
  };

  beforeEach(async () => {
    store = openSqliteStore(":memory:");
    store.createSession(sessionRecord("s", { createdAt: at, updatedAt: at }));
    bell = new Doorbell();
    db = { down: false };
    a = new SharedEventLog(store, sharedOver(store, bell, 0, db), new SyncEventBus(silentLogger), silentLogger);
    b = new SharedEventLog(store, sharedOver(store, bell, 1), new SyncEventBus(silentLogger), silentLogger);
    await Promise.all([a.open(), b.open(), a.load("s"), b.load("s")]);
    frames = { a: [], b: [] };
    a.subscribe("s", (seq, json) => frames.a.push([seq, json]));
    b.subscribe("s", (seq, json) => frames.b.push([seq, json]));
  });
  afterEach(async () => {
    await Promise.all([a.close(), b.close()]);
    store.close();
  });

  it("numbers in the store, hands A's own frames out once stored, and B the same frames through the doorbell", async () => {
    a.publish("s", notice("one"));
    a.publish("s", notice("two"));
    expect(frames.a).to.deep.equal([]);
    await a.durable();
    expect(frames.a.map(([seq]) => seq)).to.deep.equal([1, 2]);
    expect(JSON.parse(frames.a[0]?.[1] ?? "")).to.deep.equal({
      type: "notice",
      sessionId: "s",
      seq: 1,
      message: "one",
    });
    await until("b", 2);
    expect(frames.b).to.deep.equal(frames.a);
    expect(b.currentSeq("s")).to.equal(2);
  });

  it("a lost ring is made up by the next one: B reads every row after its last number, in order", async () => {
    bell.deaf.add(1);
    for (const m of ["one", "two", "three"]) a.publish("s", notice(m));
    await a.durable();
    bell.deaf.delete(1);
    b.publish("s", notice("four"));
    await b.durable();
    await until("b", 4);
    await until("a", 4);
    expect(frames.b).to.deep.equal(frames.a);
    expect(frames.b.map(([, j]) => JSON.parse(j).message)).to.deep.equal(["one", "two", "three", "four"]);
  });

  it("after the listener was away, `reconnected` makes B read what it missed (no ring needed)", async () => {
    bell.deaf.add(1);
    for (const m of ["one", "two"]) a.publish("s", notice(m));
    a.publishFeed({ type: "session_update", sessionId: "s" } as SessionEvent & { sessionId: string });
    await a.durable();
    const feed: number[] = [];
    b.subscribeFeed((seq) => feed.push(seq));
    expect(frames.b).to.deep.equal([]);
    bell.deaf.delete(1);
    bell.listeners[1]?.({ kind: "reconnected" });
    await until("b", 2);
    expect(frames.b).to.deep.equal(frames.a);
    while (feed.length < 1) await nextTurn();
    expect(feed).to.deep.equal([1]);
    expect(b.feedSeq()).to.equal(1);
  });

  it("two daemons writing one session at once get dense, unique numbers, and both subscribers the same order", async () => {
    for (let i = 0; i < 20; i++) {
      a.publish("s", notice(`a${i}`));
      b.publish("s", notice(`b${i}`));
      if (i % 3 === 0) await nextTurn();
    }
    await Promise.all([a.durable(), b.durable()]);
    await until("a", 40);
    await until("b", 40);
    expect(frames.a.map(([seq]) => seq)).to.deep.equal(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(frames.b).to.deep.equal(frames.a);
    const mine = frames.a.map(([, j]) => JSON.parse(j).message as string).filter((m) => m.startsWith("a"));
    expect(mine).to.deep.equal(Array.from({ length: 20 }, (_, i) => `a${i}`));
  });

  it("while the database is away, events wait in order, the oldest deltas dropped beyond the cap, no message", async () => {
    db.down = true;
    const token = (i: number) => ({ type: "token", text: `t${i} ` }) as SessionEvent;
    for (let i = 0; i < 6000; i++) a.publish("s", token(i));
    a.publish("s", notice("kept"));
    for (let i = 6000; i < 6010; i++) a.publish("s", token(i));
    // Every write so far found the database away: the events wait (the first attempt, then its retry timer).
    await a.durable();
    expect(frames.a).to.deep.equal([]);
    db.down = false;
    await until("a", 5000);
    const types = frames.a.map(([, json]) => JSON.parse(json) as { type: string; text?: string; message?: string });
    expect(frames.a.map(([seq]) => seq)).to.deep.equal(Array.from({ length: 5000 }, (_, i) => i + 1));
    // The newest deltas and every non-delta are there, in the order they were published.
    expect(types.filter((t) => t.type === "notice").map((t) => t.message)).to.deep.equal(["kept"]);
    expect(types.at(-1)?.text).to.equal("t6009 ");
    const texts = types.filter((t) => t.type === "token").map((t) => Number(t.text?.slice(1)));
    expect(texts).to.deep.equal([...texts].sort((x, y) => x - y));
    expect(texts[0]).to.be.greaterThan(1000);
  });

  it("appends a long queue in slices of at most 1,000 events, numbered in the order they were published", async () => {
    db.appends = [];
    for (let i = 0; i < 2500; i++) a.publish("s", notice(`n${i}`));
    await a.durable();
    expect(db.appends).to.deep.equal([1000, 1000, 500]);
    expect(frames.a.map(([seq]) => seq)).to.deep.equal(Array.from({ length: 2500 }, (_, i) => i + 1));
    expect(frames.a.map(([, j]) => JSON.parse(j).message)).to.deep.equal(
      Array.from({ length: 2500 }, (_, i) => `n${i}`),
    );
  });

  it("a slice that finds the database away goes back with the slices after it, and all are stored once, in order", async () => {
    db.appends = [];
    for (let i = 0; i < 2500; i++) a.publish("s", notice(`n${i}`));
    // The first slice is stored; the database goes away before the second.
    while (db.appends.length < 1) await nextTurn();
    db.down = true;
    await a.durable();
    expect(frames.a).to.have.length(1000);
    db.down = false;
    await until("a", 2500);
    await a.durable();
    expect(frames.a.map(([seq]) => seq)).to.deep.equal(Array.from({ length: 2500 }, (_, i) => i + 1));
    expect(frames.a.map(([, j]) => JSON.parse(j).message)).to.deep.equal(
      Array.from({ length: 2500 }, (_, i) => `n${i}`),
    );
    expect(store.readEvents("s", 0, 5000)).to.have.length(2500);
  });
});
