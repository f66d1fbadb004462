import { expect } from "chai";
import type { TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, turn } from "../testing/fake-provider.js";
import { pgCluster } from "./support/postgres.js";
import { startTeam } from "./support/team.js";

type Json = Record<string, unknown>;

/**
 * A team: daemons with their own homes, ports and tokens on one PostgreSQL database (the harness's throwaway
 * cluster). What one keeps, every other one lists, reads, searches, exports and deletes.
 */
describe("team server: several daemons on one PostgreSQL database", function () {
  this.timeout(60_000);
  let fake: FakeProvider;
  let url: string;
  let a: TestDaemon;
  let b: TestDaemon;
  let c: TestDaemon;

  beforeEach(async () => {
    fake = await startFakeProvider();
    const cluster = await pgCluster();
    // A password on the URL (trust authentication ignores it): it must never be shown.
    url = (await cluster.createDatabase()).replace("postgres@", "postgres:team-secret@");
    // Started together: one migrates, the others wait on the advisory lock and find the schema done.
    [a, b, c] = (await startTeam(3, url, fake.url)) as [TestDaemon, TestDaemon, TestDaemon];
  });
  afterEach(async () => {
    await Promise.all([a, b, c].map((d) => d?.cleanup()));
    await fake.close();
  });

  it("shows the database (kind, redacted URL, connected) and a distinct id for each daemon", async () => {
    const statuses = await Promise.all([a, b, c].map(async (d) => (await d.get("/server/status")).body as Json));
    for (const s of statuses) {
      expect(s.database).to.deep.equal({
        kind: "postgres",
        url: url.replace("team-secret", "***"),
        connected: true,
      });
      expect(JSON.stringify(s)).to.not.contain("team-secret");
    }
    expect(new Set(statuses.map((s) => s.instanceId)).size).to.equal(3);
    expect(statuses.map((s) => s.instanceId)).to.deep.equal([a, b, c].map((d) => d.info.instanceId));
  });

  it("lists, reads, searches and exports on B a session that ran on A; deleting it on C removes it everywhere", async () => {
    const id = await a.createSession({ title: "shared work" });
    const sse = await a.sse(`/sessions/${id}/events`);
    fake.script(turn({ content: "the answer about zeppelins" }));
    expect((await a.post(`/sessions/${id}/chat`, { text: "tell me about airships" })).status).to.equal(202);
    await sse.waitForType("end");
    sse.close();

    const listed = (await b.get("/sessions")).body as Json[];
    expect(listed.map((s) => [s.id, s.title])).to.deep.equal([[id, "shared work"]]);
    const view = (await b.get(`/sessions/${id}`)).body as Json & { messages: Json[] };
    expect(view.messages.map((m) => [m.role, m.content])).to.deep.equal([
      ["user", "tell me about airships"],
      ["assistant", "the answer about zeppelins"],
    ]);
    expect(((await c.get("/sessions?q=zeppel")).body as Json[]).map((s) => s.id)).to.deep.equal([id]);
    expect(((await c.get("/sessions?q=submarine")).body as Json[]).map((s) => s.id)).to.deep.equal([]);
    const exported = (await b.get(`/sessions/${id}/export`)).body as Json & { messages: Json[] };
    expect(exported.messages.map((m) => m.content)).to.deep.equal([
      "tell me about airships",
      "the answer about zeppelins",
    ]);
    // The stored events of A's turn, read through B: the same numbers and frames as A's history.
    const onA = (await a.get(`/sessions/${id}/events/history`)).body.events as Json[];
    const onB = (await b.get(`/sessions/${id}/events/history`)).body.events as Json[];
    expect(onB).to.deep.equal(onA);
    expect(onA.map((e) => e.type)).to.include("end");

    expect((await c.delete(`/sessions/${id}/permanent`)).status).to.equal(200);
    for (const d of [a, b, c]) {
      expect((await d.get(`/sessions/${id}`)).status).to.equal(404);
      expect((await d.get("/sessions")).body).to.deep.equal([]);
    }
  });
});
