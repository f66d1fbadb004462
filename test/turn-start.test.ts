import { expect } from "chai";
import { definePlugin, type NewMessage, type Provider, type SessionStore, SessionStoreToken } from "../core/index.js";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { openSqliteStore } from "../plugins/storage-sqlite/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text } from "../testing/fake-provider.js";

type Json = Record<string, unknown>;

/**
 * A store whose writes of user messages wait for the test: `held` resolves when one is waiting, `release` lets it
 * through (or fails it). Everything else is the SQLite store, in memory.
 */
function gatedStore() {
  let waiting: () => void = () => {};
  let held = new Promise<void>((resolve) => (waiting = resolve));
  let open: (fail?: Error) => void = () => {};
  let pendingWrites = 0;
  const server = openSqliteStore(":memory:");
  const store = new Proxy(server, {
    get(target, key, receiver) {
      if (key === "appendMessage") {
        return async (sessionId: string, msg: NewMessage) => {
          if (msg.role !== "user") return target.appendMessage(sessionId, msg);
          pendingWrites++;
          const gate = new Promise<void>((resolve, reject) => {
            open = (fail) => (fail ? reject(fail) : resolve());
          });
          waiting();
          try {
            await gate;
            return target.appendMessage(sessionId, msg);
          } finally {
            pendingWrites--;
          }
        };
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as unknown as SessionStore;
  const plugin = definePlugin({
    manifest: {
      id: "storage-gated",
      version: "1.0.0",
      description: "Test store: user messages are written when the test says so",
      provides: [SessionStoreToken.id],
      capabilities: ["storage"],
    },
    register(ctx) {
      ctx.services.provide(SessionStoreToken, store);
      ctx.onDispose(() => server.close());
    },
  });
  return {
    plugin,
    /** Resolves once a user message waits to be written; the next call waits for the next one. */
    held: () => held,
    pendingWrites: () => pendingWrites,
    release(fail?: Error) {
      held = new Promise<void>((resolve) => (waiting = resolve));
      open(fail);
    },
  };
}

/**
 * A turn's first model request leaves without waiting for its user message to be stored (the store writes while
 * the provider works); what clients see keeps its order: the message is announced before any of the answer.
 */
describe("turn start: the model request does not wait for the store", () => {
  let fake: FakeProvider;
  let d: TestDaemon;
  let gate: ReturnType<typeof gatedStore>;

  beforeEach(async () => {
    fake = await startFakeProvider();
    gate = gatedStore();
    const builtins = builtinPlugins.filter((p) => p.manifest.id !== "storage-sqlite").map(builtinSource);
    d = await startTestDaemon({
      builtins: [...builtins, builtinSource(gate.plugin)],
      config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" } },
    });
  });
  afterEach(async () => {
    await d.cleanup();
    await fake.close();
  });

  it("sends the request while the user message is being stored, then announces the message before the answer", async () => {
    const id = await d.createSession({ cwd: d.home });
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(text("the answer"));
    const accepted = d.post(`/sessions/${id}/chat`, { text: "the question" });
    await gate.held();
    const req = await fake.nextRequest();
    // The provider has the request; the message is still on its way to the store.
    expect(gate.pendingWrites()).to.equal(1);
    expect(req.messages.at(-1)).to.deep.equal({ role: "user", content: "the question" });
    expect(req.messages.filter((m) => m.content === "the question")).to.have.length(1);
    gate.release();
    expect((await accepted).status).to.equal(202);
    await sse.waitForType("end");
    const types = sse.frames.map((f) => f.json?.type);
    expect(types.indexOf("user_message")).to.be.lessThan(types.indexOf("token"));
    expect(types.filter((t) => t === "end")).to.have.length(1);
    const view = (await d.get(`/sessions/${id}`)).body;
    expect(view.messages.map((m: Json) => [m.role, m.content])).to.deep.equal([
      ["user", "the question"],
      ["assistant", "the answer"],
    ]);
    sse.close();
  });

  it("a message steered in meanwhile is not lost: the model gets it in the next call", async () => {
    const id = await d.createSession({ cwd: d.home });
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(text("first answer"), text("second answer"));
    const accepted = d.post(`/sessions/${id}/chat`, { text: "first" });
    await gate.held();
    await fake.nextRequest();
    const steered = await d.post(`/sessions/${id}/chat`, { text: "also this" });
    expect(steered.body.status).to.equal("steered");
    gate.release();
    expect((await accepted).status).to.equal(202);
    await gate.held();
    gate.release();
    await sse.waitForType("end");
    const second = await fake.nextRequest();
    expect(second.messages.slice(-3)).to.deep.equal([
      { role: "user", content: "first" },
      { role: "assistant", content: "first answer" },
      { role: "user", content: "also this" },
    ]);
    expect(sse.ofType("steering_injected")).to.have.length(1);
    expect(sse.ofType("end")).to.have.length(1);
    sse.close();
  });

  it("a user message the store cannot write ends the turn with an error, once, and nothing of the answer shows", async () => {
    const id = await d.createSession({ cwd: d.home });
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(text("never shown"));
    const accepted = d.post(`/sessions/${id}/chat`, { text: "doomed" });
    await gate.held();
    await fake.nextRequest();
    gate.release(new Error("disk full"));
    await accepted;
    const end = await sse.waitForType("end");
    expect(end.json?.reason).to.equal("error");
    expect(sse.ofType("error").map((f) => f.json?.message)).to.deep.equal(["disk full"]);
    expect(sse.ofType("token")).to.have.length(0);
    expect(sse.ofType("user_message")).to.have.length(0);
    // The session is usable again.
    await sse.waitFor((f) => f.json?.type === "status" && f.json.status === "idle");
    sse.close();
  });
});

/**
 * The user message is written as soon as the prompt is read, before the model request is built: its sync to disk
 * (or the database's round trip) runs while the request is built and the provider works, instead of after it, so a
 * quick first token does not wait for it.
 */
describe("turn start: the user message is on its way to the store before the model is called", () => {
  it("starts the write before the provider's stream is called, and still announces the message first", async () => {
    const gate = gatedStore();
    const writesAtCall: number[] = [];
    const probe: Provider = {
      id: "probe",
      description: "answers at once",
      async *stream() {
        writesAtCall.push(gate.pendingWrites());
        yield { type: "content", text: "quick answer" };
        yield { type: "finish", reason: "stop" };
      },
      listModels: async () => [{ id: "probe-model" }],
    };
    const probePlugin = definePlugin({
      manifest: { id: "provider-probe", version: "1.0.0", description: "probe", capabilities: ["provider"] },
      register: (ctx) => {
        ctx.providers.add(probe);
      },
    });
    const builtins = builtinPlugins
      .filter((p) => p.manifest.id !== "storage-sqlite" && p.manifest.id !== "provider-openai")
      .map(builtinSource);
    const d = await startTestDaemon({
      builtins: [...builtins, builtinSource(gate.plugin), builtinSource(probePlugin)],
    });
    try {
      const id = await d.createSession({ cwd: d.home });
      const sse = await d.sse(`/sessions/${id}/events`);
      const accepted = d.post(`/sessions/${id}/chat`, { text: "the question" });
      await gate.held();
      gate.release();
      expect((await accepted).status).to.equal(202);
      await sse.waitForType("end");
      expect(writesAtCall).to.deep.equal([1]);
      const types = sse.frames.map((f) => f.json?.type);
      expect(types.indexOf("user_message")).to.be.greaterThan(-1);
      expect(types.indexOf("user_message")).to.be.lessThan(types.indexOf("token"));
      expect(sse.ofType("token").map((f) => f.json?.text)).to.deep.equal(["quick answer"]);
      sse.close();
    } finally {
      await d.cleanup();
    }
  });
});
