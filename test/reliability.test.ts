import { expect } from "chai";
import { rawRequest } from "./stress/http.js";
import { startTestDaemon, type TestDaemon } from "./support/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools } from "./support/fake-provider.js";

/** The defects the reliability audit found (issue 14), each checked black-box against the real daemon. */
describe("reliability: defects found by fuzzing and stress", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let id: string;
  const auth = () => ({ authorization: `Bearer ${d.token}` });

  before(async () => {
    fake = await startFakeProvider();
    d = await startTestDaemon({ config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" } } });
    id = await d.createSession();
  });
  after(async () => {
    await d.cleanup();
    await fake.close();
  });

  it("answers 400 to a malformed percent-encoding in a path parameter", async () => {
    for (const bad of ["%zz", "%", "%E0%A4%A", "%C0%AF", "a%ZZb"]) {
      for (const path of [`/api/v1/sessions/${bad}`, `/api/v1/sessions/${bad}/history`]) {
        const res = await rawRequest(d.baseUrl, "GET", path, auth());
        expect(res.status, `${path}: ${res.text}`).to.equal(400);
        expect(JSON.parse(res.text).error).to.be.a("string");
      }
    }
  });

  it("answers 400 (not 500) to a body whose Content-Encoding does not match its bytes", async () => {
    for (const enc of ["gzip", "deflate", "br"]) {
      const res = await rawRequest(
        d.baseUrl,
        "POST",
        `/api/v1/sessions/${id}/rename`,
        { ...auth(), "content-type": "application/json", "content-encoding": enc },
        JSON.stringify({ title: "x" }),
      );
      expect(res.status, `${enc}: ${res.text}`).to.equal(400);
      expect(JSON.parse(res.text).error).to.be.a("string");
    }
    const unknown = await rawRequest(
      d.baseUrl,
      "POST",
      `/api/v1/sessions/${id}/rename`,
      { ...auth(), "content-type": "application/json", "content-encoding": "zstd-ish" },
      JSON.stringify({ title: "x" }),
    );
    expect(unknown.status).to.equal(415);
  });

  it("answers 400 to integers past what the store can hold", async () => {
    const huge = "9223372036854775808";
    for (const path of [
      `/sessions?offset=${huge}`,
      `/sessions/${id}/events/history?after=${huge}`,
      `/sessions/${id}/history?before=${huge}`,
      `/sessions/${id}/image?seq=${huge}&idx=0`,
      `/sessions?offset=-1`,
      `/sessions?offset=1e400`,
    ]) {
      const res = await d.get(path);
      expect(res.status, `${path}: ${res.text}`).to.equal(400);
    }
    expect((await d.get("/sessions?offset=0")).status).to.equal(200);
  });

  it("answers HEAD on both event streams with the headers and ends", async () => {
    for (const path of [`/api/v1/sessions/${id}/events`, "/api/v1/sessions/events"]) {
      const res = await rawRequest(d.baseUrl, "HEAD", path, auth());
      expect(res.status).to.equal(200);
      expect(res.headers["content-type"]).to.match(/^text\/event-stream/);
      expect(res.text).to.equal("");
    }
    // Authentication still applies.
    expect((await rawRequest(d.baseUrl, "HEAD", `/api/v1/sessions/${id}/events`, {})).status).to.equal(401);
  });

  it("keeps seq the event's number in assistant_message and gives the message's as messageSeq", async () => {
    const sid = await d.createSession();
    const sse = await d.sse(`/sessions/${sid}/events`);
    try {
      fake.script(tools([{ name: "todo_write", args: { todos: [] }, id: "c1" }]), text("done"));
      await d.post(`/sessions/${sid}/chat`, { text: "go" });
      await sse.waitForType("end");
      const msgs = sse.ofType("assistant_message");
      expect(msgs).to.have.length(2);
      for (const f of msgs) expect(f.json.seq).to.equal(Number(f.id));
      const history = (await d.get(`/sessions/${sid}`)).body.messages as Array<{ role: string; seq: number }>;
      const assistantSeqs = history.filter((m) => m.role === "assistant").map((m) => m.seq);
      expect(msgs.map((f) => f.json.messageSeq)).to.deep.equal(assistantSeqs);
    } finally {
      sse.close();
    }
  });
});
