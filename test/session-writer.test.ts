import { expect } from "chai";
import { definePlugin, type SessionStore, SessionStoreToken, T } from "../core/index.js";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { openSqliteStore } from "../plugins/storage-sqlite/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, tools, turn } from "../testing/fake-provider.js";
import type { SseClient } from "../testing/sse.js";

/** The store calls a turn makes, by method. */
type Counts = Record<string, number>;

/**
 * A store that counts the calls made on it (an in-memory SQLite database behind it): what each call would cost on a
 * network database is one round trip.
 */
function countingStore(counts: Counts) {
  return definePlugin({
    manifest: {
      id: "storage-counting",
      version: "1.0.0",
      description: "Test store: counts its calls",
      provides: [SessionStoreToken.id],
      capabilities: ["storage"],
    },
    register(ctx) {
      const server = openSqliteStore(":memory:");
      ctx.onDispose(() => server.close());
      const store = new Proxy(server, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (typeof value !== "function" || typeof prop !== "string") return value;
          return (...args: unknown[]) => {
            counts[prop] = (counts[prop] ?? 0) + 1;
            return value.apply(target, args);
          };
        },
      });
      ctx.services.provide(SessionStoreToken, store as unknown as SessionStore);
    },
  });
}

const echo = definePlugin({
  manifest: { id: "echo-tool", version: "1.0.0", description: "a read-only test tool" },
  register(ctx) {
    ctx.tools.add({
      name: "echo",
      description: "echoes",
      readOnly: true,
      parameters: T.Object({ n: T.Integer() }),
      execute: async (args) => ({ content: `echo ${args.n}` }),
    });
  },
});

describe("the session writer: a turn reads its session once and writes what the ordering rules need", function () {
  this.timeout(30_000);
  const counts: Counts = {};
  let fake: FakeProvider;
  let d: TestDaemon;
  let sse: SseClient;
  let id: string;

  before(async () => {
    fake = await startFakeProvider();
    const builtins = builtinPlugins.filter((p) => p.manifest.id !== "storage-sqlite");
    d = await startTestDaemon({
      config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" } },
      builtins: [...builtins, countingStore(counts), echo].map(builtinSource),
    });
    id = await d.createSession();
    sse = await d.sse(`/sessions/${id}/events`);
    // A first turn names the session (a title is written once); the turns measured below are later ones.
    fake.script(turn({ content: "hello" }, { usage: { prompt_tokens: 5, completion_tokens: 1 } }));
    await runTurn("first");
  });
  after(async () => {
    sse.close();
    await d.cleanup();
    await fake.close();
  });

  /** Sends a message and waits for the turn's `end` and the idle summary that follows it; the store calls it made. */
  async function runTurn(text: string): Promise<Counts> {
    for (const k of Object.keys(counts)) delete counts[k];
    const idle = () => sse.frames.filter((f) => f.json?.type === "session_update" && f.json.session.status === "idle");
    const ends = sse.ofType("end").length;
    const idles = idle().length;
    expect((await d.post(`/sessions/${id}/chat`, { text })).status).to.equal(202);
    await sse.waitFor(() => sse.ofType("end").length > ends && idle().length > idles, 15_000);
    return { ...counts };
  }

  const usage = { usage: { prompt_tokens: 10, completion_tokens: 2 } };

  it("reads the record and the context as often for a turn of four model calls as for a turn of one", async () => {
    fake.script(turn({ content: "one call" }, usage));
    const one = await runTurn("one call, please");
    fake.script(
      tools([{ name: "echo", args: { n: 1 } }], { after: [usage] }),
      tools([{ name: "echo", args: { n: 2 } }], { after: [usage] }),
      tools([{ name: "echo", args: { n: 3 } }], { after: [usage] }),
      turn({ content: "four calls" }, usage),
    );
    const four = await runTurn("four calls, please");
    expect(sse.ofType("tool_end").filter((f) => String(f.json.result.content).startsWith("echo"))).to.have.length(3);
    expect(four.getSession, "record reads").to.equal(one.getSession);
    // The context is read once, at the first model call; later calls take it from the turn's copy.
    expect(one.contextMessages ?? 0, "context reads, one call").to.be.at.most(1);
    expect(four.contextMessages ?? 0, "context reads, four calls").to.equal(one.contextMessages ?? 0);
  });

  it("writes each message once, the usage once per model call and the status once", async () => {
    fake.script(tools([{ name: "echo", args: { n: 1 } }], { after: [usage] }), turn({ content: "done" }, usage));
    const c = await runTurn("two calls, please");
    // The user message, two answers, one tool result.
    expect(c.appendMessage).to.equal(4);
    // Two usages and the turn's end (the session has its title; no error to keep or clear).
    expect(c.updateSession).to.equal(3);
  });
});
