import { expect } from "chai";
import pg from "pg";
import type { TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, turn } from "../testing/fake-provider.js";
import type { SseClient, SseFrame } from "../testing/sse.js";
import { pgCluster } from "./support/postgres.js";
import { startTeam } from "./support/team.js";

type Json = Record<string, unknown>;

/** The numbered frames of a stream (the first frame, the present state, has no number), as id and data. */
function numbered(c: SseClient): Array<[string, string]> {
  return c.frames.filter((f) => f.id !== undefined).map((f) => [f.id as string, f.data]);
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

/**
 * Live events across a team: three daemons on one PostgreSQL database. A turn that runs on one of them reaches the
 * clients of every other one while it runs, with the same frames, numbers and order as its own clients get.
 */
describe("team server: live events across daemons", function () {
  this.timeout(60_000);
  let fake: FakeProvider;
  let a: TestDaemon;
  let b: TestDaemon;
  let c: TestDaemon;
  let url: string;
  const streams: SseClient[] = [];
  const watch = async (d: TestDaemon, path: string, lastEventId?: number) => {
    const s = await d.sse(path, lastEventId === undefined ? {} : { lastEventId });
    streams.push(s);
    return s;
  };

  beforeEach(async () => {
    fake = await startFakeProvider();
    url = await (await pgCluster()).createDatabase(undefined, { migrated: true });
    [a, b, c] = (await startTeam(3, url, fake.url)) as [TestDaemon, TestDaemon, TestDaemon];
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await Promise.all([a, b, c].map((d) => d?.cleanup()));
    await fake.close();
  });

  it("a client of A and one of C watch a turn on B live, frame for frame what B's own client gets", async () => {
    const id = await b.createSession({ title: "watched" });
    const onB = await watch(b, `/sessions/${id}/events`);
    const onA = await watch(a, `/sessions/${id}/events`);
    const onC = await watch(c, `/sessions/${id}/events`);
    for (const s of [onA, onB, onC]) await s.waitForType("status");
    const held = gate();
    fake.script(
      turn(
        { reasoning: "let me think" },
        { content: "the first half, " },
        { waitFor: held.promise },
        {
          content: "and the second half",
        },
      ),
    );
    expect((await b.post(`/sessions/${id}/chat`, { text: "go" })).status).to.equal(202);
    // While B's provider still holds the rest of the answer, A's and C's clients have the first half.
    for (const s of [onA, onC]) {
      const tok = await s.waitFor((f) => f.json?.type === "token" && f.json.text === "the first half, ");
      expect(tok.json.sessionId).to.equal(id);
    }
    expect(onA.ofType("end")).to.have.length(0);
    held.open();
    // The turn's last event: the summary saying the session is idle again.
    const idle = (f: SseFrame) => f.json?.type === "session_update" && f.json.session?.status === "idle";
    for (const s of [onA, onB, onC]) await s.waitFor(idle);
    const seen = numbered(onB);
    expect(seen.map(([, d]) => JSON.parse(d).type)).to.include.members(["user_message", "token", "thinking", "end"]);
    // Dense numbers from the first event of the stream on.
    const ids = seen.map(([i]) => Number(i));
    expect(ids).to.deep.equal(Array.from({ length: ids.length }, (_, i) => (ids[0] as number) + i));
    expect(numbered(onA)).to.deep.equal(seen);
    expect(numbered(onC)).to.deep.equal(seen);
    // What was streamed is what is stored, read through any daemon.
    const history = (await c.get(`/sessions/${id}/events/history`)).body.events as Json[];
    const durable = seen.filter(([, d]) => !["token", "thinking"].includes(JSON.parse(d).type));
    const since = history.filter((e) => (e.seq as number) >= (ids[0] as number));
    expect(since.map((e) => [String(e.seq), JSON.stringify(e.payload)])).to.deep.equal(durable);
  });

  it("replays across daemons: Last-Event-ID given to A resumes a stream B numbered, during and after a turn", async () => {
    const id = await b.createSession();
    const onB = await watch(b, `/sessions/${id}/events`);
    await onB.waitForType("status");
    const held = gate();
    fake.script(turn({ content: "one two " }, { waitFor: held.promise }, { content: "three" }));
    expect((await b.post(`/sessions/${id}/chat`, { text: "count" })).status).to.equal(202);
    await onB.waitFor((f) => f.json?.text === "one two ");
    // Mid-turn: A replays from the first numbered frame B's client got, then follows live.
    const firstId = Number(numbered(onB)[0]?.[0]);
    const midA = await watch(a, `/sessions/${id}/events`, firstId);
    await midA.waitFor((f) => f.json?.text === "one two ");
    held.open();
    const idle = (f: SseFrame) => f.json?.type === "session_update" && f.json.session?.status === "idle";
    await onB.waitFor(idle);
    await midA.waitFor(idle);
    const all = numbered(onB);
    expect(numbered(midA)).to.deep.equal(all.slice(1));
    // After the turn: from any number on, C gives exactly the frames after it.
    const cut = Number(all[Math.floor(all.length / 2)]?.[0]);
    const late = await watch(c, `/sessions/${id}/events`, cut);
    await late.waitFor(idle);
    expect(numbered(late)).to.deep.equal(all.filter(([i]) => Number(i) > cut));
    // A number no daemon gave is refused the same way everywhere.
    const ahead = await watch(a, `/sessions/${id}/events`, Number(all[all.length - 1]?.[0]) + 5);
    const resync = await ahead.waitForType("resync");
    expect(resync.json.lastSeq).to.equal(Number(all[all.length - 1]?.[0]));
  });

  it("/sessions/events on A carries B's and C's sessions, with the numbers and frames of B's own feed", async () => {
    const feedA = await watch(a, "/sessions/events");
    const feedB = await watch(b, "/sessions/events");
    for (const f of [feedA, feedB]) await f.waitForType("connected");
    const fromB = await b.createSession({ title: "from B" });
    const fromC = await c.createSession({ title: "from C" });
    fake.script(turn({ content: "done" }));
    expect((await b.post(`/sessions/${fromB}/chat`, { text: "work" })).status).to.equal(202);
    const idle = (f: SseFrame) =>
      f.json?.type === "session_update" && f.json.sessionId === fromB && f.json.session?.status === "idle";
    await feedA.waitFor((f) => f.json?.type === "session_update" && f.json.sessionId === fromB);
    expect((await c.post(`/sessions/${fromC}/rename`, { title: "renamed on C" })).status).to.equal(200);
    for (const f of [feedA, feedB]) {
      await f.waitFor(
        (x) =>
          x.json?.type === "session_update" && x.json.sessionId === fromC && x.json.session.title === "renamed on C",
      );
      await f.waitFor(idle);
    }
    const created = feedA.ofType("session_created").map((f) => [f.json.sessionId, f.json.session.title]);
    expect(created).to.deep.equal([
      [fromB, "from B"],
      [fromC, "from C"],
    ]);
    // Both feeds are the one feed: same numbers, same frames, dense.
    const lastA = Number(numbered(feedA).at(-1)?.[0]);
    const lastB = Number(numbered(feedB).at(-1)?.[0]);
    const upTo = Math.min(lastA, lastB);
    const prefix = (s: SseClient) => numbered(s).filter(([i]) => Number(i) <= upTo);
    expect(prefix(feedA)).to.deep.equal(prefix(feedB));
    const ids = numbered(feedA).map(([i]) => Number(i));
    expect(ids).to.deep.equal(Array.from({ length: ids.length }, (_, i) => (ids[0] as number) + i));
  });

  it("numbers stay dense and unique when three daemons write one session at once, and every client agrees", async () => {
    const id = await a.createSession();
    const watchers = await Promise.all([a, b, c].map((d) => watch(d, `/sessions/${id}/events`)));
    for (const s of watchers) await s.waitForType("status");
    const writes = [a, b, c].flatMap((d, n) =>
      Array.from({ length: 10 }, (_, i) => d.post(`/sessions/${id}/rename`, { title: `t${n}-${i}` })),
    );
    for (const res of await Promise.all(writes)) expect(res.status).to.equal(200);
    // session_created, then one session_update per rename: the last is number 31 on every daemon's stream.
    for (const s of watchers) await s.waitFor((f) => f.id === "31");
    const history = (await b.get(`/sessions/${id}/events/history`)).body.events as Json[];
    const seqs = history.map((e) => e.seq as number);
    expect(seqs).to.deep.equal(Array.from({ length: seqs.length }, (_, i) => i + 1));
    const updates = history.filter((e) => e.type === "session_update").length;
    expect(updates).to.equal(30);
    const [first, ...others] = watchers.map(numbered);
    for (const o of others) expect(o).to.deep.equal(first);
    expect(first?.map(([i]) => Number(i))).to.deep.equal(seqs.slice(seqs.length - (first?.length ?? 0)));
  });
  it("a session deleted on A ends its streams on B and C with the frame A's own client gets", async () => {
    const id = await a.createSession();
    const watchers = await Promise.all([a, b, c].map((d) => watch(d, `/sessions/${id}/events`)));
    for (const s of watchers) await s.waitForType("status");
    expect((await a.delete(`/sessions/${id}/permanent`)).status).to.equal(200);
    const closed = await Promise.all(watchers.map((s) => s.waitForType("session_closed")));
    expect(closed[0]?.json).to.deep.include({ sessionId: id, deleted: true });
    for (const f of closed) expect([f.id, f.data]).to.deep.equal([closed[0]?.id, closed[0]?.data]);
    for (const s of watchers) await s.waitEnd();
  });
  it("listening connections cut at the server: they listen again by themselves and nothing is missed", async () => {
    const id = await a.createSession();
    const watchers = await Promise.all([a, b, c].map((d) => watch(d, `/sessions/${id}/events`)));
    for (const s of watchers) await s.waitForType("status");
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const cut = await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN agentd_%'",
      );
      expect(cut.rowCount).to.equal(3);
      // Written while the doorbells are away (or just back): every client still gets every frame, once, in order.
      for (let i = 0; i < 5; i++) {
        expect((await a.post(`/sessions/${id}/rename`, { title: `during ${i}` })).status).to.equal(200);
      }
      for (const s of watchers) await s.waitFor((f) => f.json?.session?.title === "during 4", 15_000);
      const [first, ...others] = watchers.map(numbered);
      for (const o of others) expect(o).to.deep.equal(first);
      expect(first?.map(([, d]) => JSON.parse(d).session.title)).to.deep.equal(
        [0, 1, 2, 3, 4].map((i) => `during ${i}`),
      );
      // And the doorbell works again: a turn's frames reach B live.
      fake.script(turn({ content: "after the cut" }));
      expect((await a.post(`/sessions/${id}/chat`, { text: "again" })).status).to.equal(202);
      await watchers[1]?.waitFor((f) => f.json?.text === "after the cut", 15_000);
    } finally {
      await admin.end();
    }
  });
});
