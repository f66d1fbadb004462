import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { makeTempHome, spawnDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, tools, turn } from "../testing/fake-provider.js";

/** The daemon as a real child process: SIGKILL mid-turn, restart, and graceful shutdown with SIGTERM. */
describe("agent turns across daemon crashes and shutdowns", function () {
  this.timeout(40_000);
  let fake: FakeProvider;
  let home: string;

  beforeEach(async () => {
    fake = await startFakeProvider();
    home = makeTempHome();
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({ provider: { baseURL: fake.url, apiKey: "sk-test", model: "m" } }),
    );
  });
  afterEach(async () => {
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  });

  const todos = { todos: [{ content: "inspect", status: "completed" }] };

  it("keeps everything completed before a SIGKILL and ends the interrupted turn at restart", async () => {
    const p = await spawnDaemon(home);
    const id = (await p.client.post("/sessions", {})).body.id as string;
    const sse = await p.client.sse(`/sessions/${id}/events`);
    fake.script(tools([{ name: "todo_write", args: todos, id: "call_t" }], { before: [{ content: "Planning." }] }));
    fake.script(turn({ content: "half way" }, { waitFor: new Promise(() => {}) }));
    await p.client.post(`/sessions/${id}/chat`, { text: "do the thing", clientMessageId: "cm-1" });
    await sse.waitFor((f) => f.json?.type === "token" && JSON.stringify(f.json).includes("half"));
    sse.close();
    p.child.kill("SIGKILL");
    await p.exited;

    const p2 = await spawnDaemon(home);
    try {
      const view = await p2.client.get(`/sessions/${id}`);
      expect(view.status).to.equal(200);
      expect(view.body.status).to.equal("idle");
      const [user, assistant] = view.body.messages;
      expect(user).to.deep.include({ role: "user", content: "do the thing", clientMessageId: "cm-1" });
      expect(assistant.content).to.equal("Planning.");
      expect(assistant.toolCalls[0]).to.deep.include({ id: "call_t", name: "todo_write", status: "ok" });
      // The interrupted turn is recorded as ended, exactly once.
      const events = (await p2.client.get(`/sessions/${id}/events/history`)).body;
      const list = events.events as Array<{ type: string; payload: { reason?: string; recovered?: boolean } }>;
      const ends = list.filter((e) => e.type === "end");
      expect(ends).to.have.length(1);
      expect(ends[0]?.payload).to.deep.include({ reason: "aborted", recovered: true });
      // The retried POST of the same message is still recognised after the restart.
      const again = await p2.client.post(`/sessions/${id}/chat`, { text: "do the thing", clientMessageId: "cm-1" });
      expect(again.body.status).to.equal("duplicate");
      // The session works normally afterwards.
      const live = await p2.client.sse(`/sessions/${id}/events`);
      await p2.client.post(`/sessions/${id}/chat`, { text: "continue" });
      await live.waitFor((f) => f.json?.type === "end");
      live.close();
      expect((await p2.client.get(`/sessions/${id}`)).body.messages.at(-1).role).to.equal("assistant");
    } finally {
      p2.child.kill("SIGTERM");
      await p2.exited;
    }
  });

  it("ends running turns with reason aborted on SIGTERM and exits cleanly", async () => {
    const p = await spawnDaemon(home);
    const id = (await p.client.post("/sessions", {})).body.id as string;
    const sse = await p.client.sse(`/sessions/${id}/events`);
    fake.script(turn({ content: "streaming" }, { waitFor: new Promise(() => {}) }));
    await p.client.post(`/sessions/${id}/chat`, { text: "long job" });
    await sse.waitForType("token");
    p.child.kill("SIGTERM");
    const end = await sse.waitForType("end");
    expect(end.json.reason).to.equal("aborted");
    expect(await p.exited).to.equal(0);
    sse.close();

    const p2 = await spawnDaemon(home);
    try {
      const view = await p2.client.get(`/sessions/${id}`);
      expect(view.body.status).to.equal("idle");
      expect(view.body.messages.map((m: { content: string }) => m.content)).to.deep.equal(["long job", "streaming"]);
      const events = (await p2.client.get(`/sessions/${id}/events/history`)).body;
      const list = events.events as Array<{ type: string }>;
      expect(list.filter((e) => e.type === "end")).to.have.length(1); // no second, "recovered" end
    } finally {
      p2.child.kill("SIGTERM");
      await p2.exited;
    }
  });
});
