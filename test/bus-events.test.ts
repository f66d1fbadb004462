import { expect } from "chai";
import { type BusEvent, definePlugin, defineTool, T } from "../core/index.js";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, tools, turn } from "../testing/fake-provider.js";

/** One line per lifecycle event, built by switching on the discriminated union (no casts, no wire payloads). */
function describeEvent(e: BusEvent): string | undefined {
  switch (e.type) {
    case "session.created":
      return `session.created ${e.session.status}`;
    case "turn.started":
      return `turn.started ${typeof e.startedAt}`;
    case "turn.ended":
      return `turn.ended ${e.reason}`;
    case "message.appended":
      return `message.appended ${e.message.role}${e.opensTurn ? " opensTurn" : ""}${e.message.toolCalls ? ` calls=${e.message.toolCalls.map((c) => c.name).join(",")}` : ""}${e.message.toolName ? ` tool=${e.message.toolName}` : ""}`;
    case "tool.before":
      return `tool.before ${e.tool} ${JSON.stringify(e.args)}`;
    case "tool.after":
      return `tool.after ${e.tool} ${e.result.content}`;
    default:
      return undefined;
  }
}

function recorder(seen: string[], seqs: Array<{ seq: number; opensTurn: boolean }>) {
  const record = (e: BusEvent) => {
    if ("sessionId" in e || e.type === "session.created") {
      const line = describeEvent(e);
      if (line) seen.push(line);
    }
    if (e.type === "message.appended") seqs.push({ seq: e.message.seq, opensTurn: e.opensTurn });
  };
  return definePlugin({
    manifest: { id: "bus-probe", version: "1.0.0", description: "records lifecycle events" },
    register(ctx) {
      ctx.tools.add(
        defineTool({
          name: "shout",
          description: "upper-cases a word",
          parameters: T.Object({ word: T.String() }),
          readOnly: true,
          execute: async ({ word }) => ({ content: word.toUpperCase() }),
        }),
      );
      for (const type of [
        "session.created",
        "turn.started",
        "turn.ended",
        "message.appended",
        "tool.before",
        "tool.after",
      ] as const) {
        ctx.events.on(type, record);
      }
    },
  });
}

describe("typed lifecycle events on the plugin bus", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  const seen: string[] = [];
  const seqs: Array<{ seq: number; opensTurn: boolean }> = [];

  beforeEach(async () => {
    seen.length = 0;
    seqs.length = 0;
    fake = await startFakeProvider();
    d = await startTestDaemon({
      config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" } },
      builtins: [...builtinPlugins, recorder(seen, seqs)].map(builtinSource),
    });
  });
  afterEach(async () => {
    await d.cleanup();
    await fake.close();
  });

  it("announces a turn as session.created, turn.started, message.appended, tool.before/after, turn.ended", async () => {
    const id = await d.createSession();
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(tools([{ name: "shout", args: { word: "hey" }, id: "call_1" }]), turn({ content: "done" }));
    expect((await d.post(`/sessions/${id}/chat`, { text: "go" })).status).to.equal(202);
    await sse.waitForType("end", 15_000);
    await sse.waitForType("session_end", 15_000);
    sse.close();
    expect(seen).to.deep.equal([
      "session.created idle",
      "turn.started number",
      "message.appended user opensTurn",
      "message.appended assistant calls=shout",
      'tool.before shout {"word":"hey"}',
      "tool.after shout HEY",
      "message.appended tool tool=shout",
      "message.appended assistant",
      "turn.ended stop",
    ]);
    // The numbers are the stored messages' own: one event per stored message, in order.
    expect(seqs.map((x) => x.seq)).to.deep.equal([1, 2, 3, 4]);
  });

  it("marks only the message a turn starts with as opening it (a follow-up that becomes the next turn opens it too)", async () => {
    const id = await d.createSession();
    const sse = await d.sse(`/sessions/${id}/events`);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    fake.script(turn({ content: "one " }, { waitFor: held }, { content: "more" }), turn({ content: "two" }));
    await d.post(`/sessions/${id}/chat`, { text: "first" });
    await sse.waitFor((f) => f.json?.type === "token");
    expect((await d.post(`/sessions/${id}/followup`, { message: "second" })).body.status).to.equal("queued");
    release();
    await sse.waitFor(() => sse.ofType("end").length >= 2, 15_000);
    sse.close();
    const users = seen.filter((l) => l.startsWith("message.appended user"));
    expect(users).to.deep.equal(["message.appended user opensTurn", "message.appended user opensTurn"]);
    expect(seen.filter((l) => l.startsWith("turn."))).to.deep.equal([
      "turn.started number",
      "turn.ended stop",
      "turn.started number",
      "turn.ended stop",
    ]);
  });
});
