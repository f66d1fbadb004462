import { expect } from "chai";
import { SessionStoreToken } from "../core/store.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, turn } from "../testing/fake-provider.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

describe("session export and import", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;

  beforeEach(async () => {
    fake = await startFakeProvider();
    d = await startTestDaemon({
      config: { provider: { baseURL: fake.url, apiKey: "sk-secret-key", model: "fake-model" } },
    });
  });
  afterEach(async () => {
    await d.cleanup();
    await fake.close();
  });

  /** A session with reasoning, a tool call and its (failed) result, and a final answer. */
  async function conversation(): Promise<string> {
    const id = await d.createSession({ cwd: d.home, title: "Export me" });
    fake.script(
      turn({ reasoning: "let me look" }, { toolCall: { id: "t1", name: "no_such_tool", arguments: '{"x":1}' } }),
      text("The answer has ``` fences ``` inside."),
    );
    const sse = await d.sse(`/sessions/${id}/events`);
    await d.post(`/sessions/${id}/chat`, { text: "What is here?", clientMessageId: "c-1" });
    await sse.waitForType("end");
    sse.close();
    return id;
  }

  const exportJson = async (id: string) => {
    const res = await fetch(`${d.api}/sessions/${id}/export?format=json`, {
      headers: { authorization: `Bearer ${d.token}` },
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-type")).to.match(/^application\/json/);
    expect(res.headers.get("content-disposition")).to.match(/^attachment; filename=".+\.json"$/);
    return JSON.parse(await res.text());
  };

  it("round-trips a conversation through JSON: the same messages, one by one", async () => {
    const id = await conversation();
    const doc = await exportJson(id);
    expect(doc).to.include({ format: "agentd.session", version: 1 });
    expect(doc.session).to.include({ id, title: "Export me", model: "fake-model", cwd: d.home, mode: "build" });
    const roles = doc.messages.map((m: Json) => m.role);
    expect(roles).to.deep.equal(["user", "assistant", "tool", "assistant"]);
    expect(doc.messages[1].toolCalls[0]).to.deep.equal({ id: "t1", name: "no_such_tool", arguments: '{"x":1}' });
    expect(doc.messages[1].thinking).to.equal("let me look");
    expect(doc.messages[2]).to.include({ toolCallId: "t1", toolName: "no_such_tool" });
    expect(JSON.stringify(doc)).to.not.include("sk-secret-key");

    const imported = await d.post("/sessions/import", doc);
    expect(imported.status).to.equal(201);
    expect(imported.body.id).to.not.equal(id);
    expect(imported.body.session).to.include({ id: imported.body.id, title: "Export me", model: "fake-model" });
    expect(imported.body.session.messages.map((m: Json) => m.content)).to.deep.equal(
      (await d.get(`/sessions/${id}`)).body.messages.map((m: Json) => m.content),
    );
    const again = await exportJson(imported.body.id);
    expect(again.messages).to.have.length(doc.messages.length);
    for (const [i, m] of doc.messages.entries()) expect(again.messages[i], `message ${i}`).to.deep.equal(m);

    // The imported session continues like any other: the model sees the same context.
    const sse = await d.sse(`/sessions/${imported.body.id}/events`);
    await d.post(`/sessions/${imported.body.id}/chat`, { text: "go on" });
    await sse.waitForType("end");
    sse.close();
    const sent = fake.requests.at(-1)?.messages.map((m) => m.role);
    expect(sent).to.deep.equal(["system", "user", "assistant", "tool", "assistant", "user"]);
  });

  it("exports readable Markdown with tool calls and results", async () => {
    const id = await conversation();
    const res = await fetch(`${d.api}/sessions/${id}/export?format=markdown`, {
      headers: { authorization: `Bearer ${d.token}` },
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-type")).to.match(/^text\/markdown/);
    const md = await res.text();
    expect(md).to.match(/^# Export me\n/);
    expect(md).to.include("### User").and.include("What is here?");
    expect(md).to.include("#### Tool call `no_such_tool`").and.include('"x": 1');
    expect(md).to.include("#### Result of `no_such_tool` (error)");
    expect(md).to.include("<summary>Thinking</summary>").and.include("let me look");
    // Content with backtick fences stays inside a longer fence.
    expect(md).to.include("The answer has ``` fences ``` inside.");
    expect(md).to.not.include("sk-secret-key");
  });

  it("streams large sessions in pages and imports them whole", async () => {
    const id = await d.createSession({ cwd: d.home });
    const store = d.daemon.services.get(SessionStoreToken);
    for (let i = 0; i < 450; i++) {
      await store.appendMessage(id, {
        role: i % 2 ? "assistant" : "user",
        content: `message ${i}`,
        inContext: i >= 100,
      });
    }
    const doc = await exportJson(id);
    expect(doc.messages).to.have.length(450);
    expect(doc.messages.map((m: Json) => m.content)).to.deep.equal(
      Array.from({ length: 450 }, (_, i) => `message ${i}`),
    );
    expect(doc.messages[99].inContext).to.equal(false);
    const imported = await d.post("/sessions/import", doc);
    expect(imported.status).to.equal(201);
    const again = await exportJson(imported.body.id);
    expect(again.messages).to.deep.equal(doc.messages);
    expect(await store.contextMessages(imported.body.id)).to.have.length(350);
  });

  it("answers 404 for an unknown session and 400 for a bad document or format", async () => {
    expect((await d.get("/sessions/nope/export")).status).to.equal(404);
    const id = await d.createSession({ cwd: d.home });
    expect((await d.get(`/sessions/${id}/export?format=pdf`)).status).to.equal(400);
    expect((await d.post("/sessions/import", {})).status).to.equal(400);
    expect((await d.post("/sessions/import", { format: "other", version: 1 })).status).to.equal(400);
    const doc = await exportJson(id);
    const orphan = {
      ...doc,
      messages: [
        { role: "tool", content: "x", toolCallId: "zz", inContext: true, createdAt: new Date().toISOString() },
      ],
    };
    const res = await d.post("/sessions/import", orphan);
    expect(res.status).to.equal(400);
    expect(res.body.error).to.match(/tool result must answer a tool call/);
    const before = (await d.get<Json[]>("/sessions")).body.length;
    expect(before).to.equal(1);
  });
});
