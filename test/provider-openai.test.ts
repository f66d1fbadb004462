import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { type Provider, type ProviderDelta, type ProviderRequest, reasoningRequestFields } from "../core/index.js";
import { ModelCache } from "../plugins/provider-openai/model-cache.js";
import { coalesce, createOpenAIProvider, type OpenAIProviderOptions } from "../plugins/provider-openai/provider.js";
import { verifyProvider } from "../plugins/provider-openai/verify.js";
import { type FakeProvider, fail, reset, startFakeProvider, text, turn } from "../testing/fake-provider.js";

const KEY = "sk-secret-test-key-0123456789";
const FAST: OpenAIProviderOptions = { backoff: { baseMs: 5, capMs: 200, random: () => 0.5 } };

const request = (extra: Partial<ProviderRequest> = {}): ProviderRequest => ({
  model: "fake-model",
  messages: [{ role: "user", content: "hi" }],
  ...extra,
});

/** Drains a provider stream; a thrown error is returned next to the deltas seen before it. */
async function drain(
  provider: Provider,
  req: ProviderRequest = request(),
  signal = new AbortController().signal,
): Promise<{ deltas: ProviderDelta[]; error?: Error }> {
  const deltas: ProviderDelta[] = [];
  try {
    for await (const d of provider.stream(req, signal)) deltas.push(d);
    return { deltas };
  } catch (err) {
    return { deltas, error: err as Error };
  }
}

const contentOf = (deltas: ProviderDelta[]) => deltas.map((d) => (d.type === "content" ? d.text : "")).join("");
const ofType = <K extends ProviderDelta["type"]>(deltas: ProviderDelta[], type: K) =>
  deltas.filter((d): d is Extract<ProviderDelta, { type: K }> => d.type === type);

describe("provider-openai", () => {
  let fake: FakeProvider;
  let provider: Provider;

  beforeEach(async () => {
    fake = await startFakeProvider();
    provider = createOpenAIProvider({ baseURL: fake.url, apiKey: KEY, model: "fake-model" }, FAST);
  });
  afterEach(() => fake.close());

  describe("stream", () => {
    it("yields reasoning, content, tool-call deltas, finish and mapped usage", async () => {
      fake.script(
        turn(
          { reasoning: "thinking" },
          { content: "Let me look." },
          { toolCall: { id: "call_a", name: "read", arguments: '{"path":"README.md"}' } },
          { usage: { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 64 } },
        ),
      );
      const tools = [{ type: "function" as const, function: { name: "read", description: "Read", parameters: {} } }];
      const { deltas, error } = await drain(provider, request({ tools }));

      expect(error).to.equal(undefined);
      expect(ofType(deltas, "reasoning").map((d) => d.text)).to.deep.equal(["thinking"]);
      expect(contentOf(deltas)).to.equal("Let me look.");
      const calls = ofType(deltas, "tool_call");
      expect(calls.length).to.be.greaterThan(1, "arguments arrive in several deltas");
      expect(calls.every((d) => d.index === 0)).to.equal(true);
      expect(calls[0]).to.include({ id: "call_a", name: "read" });
      expect(calls.map((d) => d.argumentsDelta ?? "").join("")).to.equal('{"path":"README.md"}');
      expect(ofType(deltas, "finish")).to.deep.equal([{ type: "finish", reason: "tool_calls" }]);
      expect(ofType(deltas, "usage")).to.deep.equal([
        { type: "usage", usage: { promptTokens: 100, completionTokens: 20, totalTokens: 120, cacheReadTokens: 64 } },
      ]);

      const sent = fake.requests[0];
      expect(sent?.stream).to.equal(true);
      expect(sent?.stream_options).to.deep.equal({ include_usage: true });
      expect(sent?.tool_choice).to.equal("auto");
      expect(sent?.tools).to.deep.equal(tools);
      expect(fake.calls[0]?.headers.authorization).to.equal(`Bearer ${KEY}`);
    });

    it("passes the reasoning effort, except off", async () => {
      await drain(provider, request({ reasoningEffort: "high" }));
      await drain(provider, request({ reasoningEffort: "off" }));
      expect(fake.requests[0]?.reasoning_effort).to.equal("high");
      expect(fake.requests[1]).not.to.have.property("reasoning_effort");
      expect(fake.requests[1]).not.to.have.property("chat_template_kwargs");
    });

    it("spells the thinking switch of hybrid models the way the serving stack reads it", async () => {
      // A local OpenAI-compatible server (vLLM, SGLang, llama.cpp) serving Qwen3: chat_template_kwargs.
      await drain(provider, request({ model: "Qwen/Qwen3-32B", reasoningEffort: "off" }));
      expect((fake.requests[0] as unknown as Record<string, unknown>).chat_template_kwargs).to.deep.equal({
        enable_thinking: false,
      });
      expect(fake.requests[0]).not.to.have.property("reasoning_effort");
      // Not a switch model: on/off is not sent at all.
      await drain(provider, request({ model: "llama-3.1-8b", reasoningEffort: "on" }));
      expect(Object.keys(fake.requests[1] as object)).to.not.include.members([
        "chat_template_kwargs",
        "reasoning_effort",
      ]);
    });

    it("maps reasoning choices per provider dialect", () => {
      expect(reasoningRequestFields("on", "qwen")).to.deep.equal({ enable_thinking: true });
      expect(reasoningRequestFields("off", "zai")).to.deep.equal({ thinking: { type: "disabled" } });
      expect(reasoningRequestFields("high", "openrouter")).to.deep.equal({ reasoning: { effort: "high" } });
      expect(reasoningRequestFields("low", "openai")).to.deep.equal({ reasoning_effort: "low" });
      expect(reasoningRequestFields(undefined, "openai")).to.deep.equal({});
    });

    it("joins adjacent text deltas of one kind, keeping the order of everything else and the deltas given", () => {
      const given: ProviderDelta[] = [
        { type: "reasoning", text: "a" },
        { type: "reasoning", text: "b" },
        { type: "content", text: "c" },
        { type: "content", text: "d" },
        { type: "tool_call", index: 0, id: "t", name: "x" },
        { type: "content", text: "e" },
        { type: "finish", reason: "stop" },
      ];
      const copy = structuredClone(given);
      expect(coalesce(given)).to.deep.equal([
        { type: "reasoning", text: "ab" },
        { type: "content", text: "cd" },
        { type: "tool_call", index: 0, id: "t", name: "x" },
        { type: "content", text: "e" },
        { type: "finish", reason: "stop" },
      ]);
      expect(given).to.deep.equal(copy);
    });

    it("streams the chunks of one network read as one content delta, and never waits to join later reads", async () => {
      let next!: () => void;
      const second = new Promise<void>((resolve) => (next = resolve));
      const chunk = (content: string) =>
        `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
      const server = createServer((req, res) => {
        req.resume();
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(chunk("one ") + chunk("two ") + chunk("three "));
        void second.then(() => res.end(`${chunk("four ")}${chunk("five")}data: [DONE]\n\n`));
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      try {
        const p = createOpenAIProvider({ baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` });
        const seen: string[] = [];
        for await (const d of p.stream(request(), new AbortController().signal)) {
          if (d.type !== "content") continue;
          seen.push(d.text);
          // The rest is written only once the first read has come through: it cannot have been waited for.
          if (seen.length === 1) next();
        }
        expect(seen).to.deep.equal(["one two three ", "four five"]);
      } finally {
        server.close();
      }
    });

    it("ends without finish when the connection is cut mid-stream, and does not retry", async () => {
      fake.script([{ content: "partial" }, { cut: true }], text("must not be used"));
      const { deltas, error } = await drain(provider);
      expect(error).to.equal(undefined);
      expect(contentOf(deltas)).to.equal("partial");
      expect(ofType(deltas, "finish")).to.deep.equal([]);
      expect(ofType(deltas, "retry")).to.deep.equal([]);
      expect(fake.requests).to.have.length(1);
    });

    it("retries a 500 once, reporting the retry before the content", async () => {
      fake.script(fail(500), text("recovered"));
      const { deltas, error } = await drain(provider);
      expect(error).to.equal(undefined);
      expect(deltas[0]).to.include({ type: "retry", attempt: 1 });
      expect((deltas[0] as { reason: string }).reason).to.contain("500");
      expect(ofType(deltas, "retry")).to.have.length(1);
      expect(contentOf(deltas)).to.equal("recovered");
      expect(ofType(deltas, "finish")).to.deep.equal([{ type: "finish", reason: "stop" }]);
      expect(fake.requests).to.have.length(2);
    });

    it("honours retry-after-ms on a 429", async () => {
      fake.script(fail(429, { headers: { "retry-after-ms": "60" } }), text("ok"));
      const started = Date.now();
      const { deltas } = await drain(provider);
      const [retry] = ofType(deltas, "retry");
      expect(retry?.delayMs).to.equal(60, "the server's delay, not the 5 ms backoff");
      expect(Date.now() - started).to.be.at.least(55);
      expect(contentOf(deltas)).to.equal("ok");
    });

    it("caps a long Retry-After at the backoff cap", async () => {
      fake.script(fail(429, { headers: { "retry-after": "120" } }), text("ok"));
      const { deltas } = await drain(provider);
      expect(ofType(deltas, "retry").map((r) => r.delayMs)).to.deep.equal([200]);
      expect(contentOf(deltas)).to.equal("ok");
    });

    it("does not retry an exhausted quota (429 insufficient_quota)", async () => {
      fake.script(
        fail(429, { body: { error: { message: "You exceeded your current quota", code: "insufficient_quota" } } }),
      );
      const { deltas, error } = await drain(provider);
      expect(ofType(deltas, "retry")).to.deep.equal([]);
      expect(error?.message).to.match(/quota exhausted \(429\)/);
    });

    it("retries a connection reset before the first byte", async () => {
      fake.script(reset(), text("after reset"));
      const { deltas, error } = await drain(provider);
      expect(error).to.equal(undefined);
      const retries = ofType(deltas, "retry");
      expect(retries).to.have.length(1);
      expect(retries[0]?.reason).to.match(/cannot connect/);
      expect(contentOf(deltas)).to.equal("after reset");
    });

    it("gives up after 5 attempts with backoff growing", async () => {
      fake.script(fail(503), fail(503), fail(503), fail(503), fail(503), text("too late"));
      const { deltas, error } = await drain(provider);
      const retries = ofType(deltas, "retry");
      expect(retries.map((r) => r.attempt)).to.deep.equal([1, 2, 3, 4]);
      // equal jitter at random() = 0.5: 3/4 of 5, 10, 20, 40 ms
      expect(retries.map((r) => r.delayMs)).to.deep.equal([4, 8, 15, 30]);
      expect(error?.message).to.match(/503.*gave up after 5 attempts/);
      expect(fake.requests).to.have.length(5);
    });

    it("does not retry a 401 and names the status without leaking the key", async () => {
      fake.script(fail(401, { body: { error: { message: `Incorrect API key provided: ${KEY}` } } }), text("x"));
      const { deltas, error } = await drain(provider);
      expect(deltas).to.deep.equal([]);
      expect(error?.message).to.equal("provider rejected the API key (401)");
      expect(fake.requests).to.have.length(1);
    });

    it("redacts the key from a 400's provider message", async () => {
      fake.script(fail(400, { body: { error: { message: `bad request for key ${KEY}: unknown model` } } }));
      const { error } = await drain(provider);
      expect(error?.message).to.match(/^provider rejected the request \(400\): .*unknown model/);
      expect(error?.message).not.to.contain(KEY);
    });

    it("stops promptly when aborted mid-stream", async () => {
      const never = new Promise<void>(() => {});
      fake.script(turn({ content: "first" }, { waitFor: never }, { content: "never sent" }));
      const ac = new AbortController();
      const seen: ProviderDelta[] = [];
      let error: unknown;
      try {
        for await (const d of provider.stream(request(), ac.signal)) {
          seen.push(d);
          if (d.type === "content") ac.abort();
        }
      } catch (err) {
        error = err;
      }
      expect(contentOf(seen)).to.equal("first");
      expect((error as Error | undefined)?.name).to.equal("AbortError");
    });

    it("stops promptly when aborted during a backoff wait", async () => {
      const slow = createOpenAIProvider(
        { baseURL: fake.url, apiKey: KEY },
        { backoff: { baseMs: 60_000, capMs: 60_000 } },
      );
      fake.script(fail(500), text("x"));
      const ac = new AbortController();
      let error: unknown;
      try {
        for await (const d of slow.stream(request(), ac.signal)) if (d.type === "retry") ac.abort();
      } catch (err) {
        error = err;
      }
      expect((error as Error | undefined)?.name).to.equal("AbortError");
      expect(fake.requests).to.have.length(1);
    });

    it("sends no Authorization header when no key is configured", async () => {
      const keyless = createOpenAIProvider({ baseURL: fake.url, model: "fake-model" }, FAST);
      fake.script(text("local"));
      expect(contentOf((await drain(keyless)).deltas)).to.equal("local");
      expect(fake.calls[0]?.headers.authorization).to.equal(undefined);
    });

    it("re-reads settings given as a function", async () => {
      const other = await startFakeProvider({ defaultReply: "from other" });
      try {
        let baseURL = fake.url;
        const live = createOpenAIProvider(() => ({ baseURL, apiKey: KEY }), FAST);
        expect(contentOf((await drain(live)).deltas)).to.equal("Hello from the fake provider.");
        baseURL = other.url;
        expect(contentOf((await drain(live)).deltas)).to.equal("from other");
      } finally {
        await other.close();
      }
    });
  });

  describe("listModels", () => {
    it("maps and sorts the provider's models", async () => {
      fake.setModels([{ id: "zeta", owned_by: "acme", context_length: 131072 }, "alpha"]);
      expect(await provider.listModels()).to.deep.equal([
        { id: "alpha", ownedBy: "fake" },
        { id: "zeta", ownedBy: "acme", contextWindow: 131072 },
      ]);
    });

    it("fails with a clear message on a refused key", async () => {
      fake.setModels(fail(401));
      let error: Error | undefined;
      await provider.listModels().catch((e: Error) => {
        error = e;
      });
      expect(error?.message).to.equal("provider rejected the API key (401)");
    });
  });

  describe("verifyProvider", () => {
    it("reports ok with the model ids", async () => {
      fake.setModels(["b", "a"]);
      const r = await verifyProvider(fake.url, KEY, new AbortController().signal);
      expect(r).to.deep.equal({ ok: true, probe: "ok", models: ["a", "b"] });
      expect(fake.calls[0]?.headers.authorization).to.equal(`Bearer ${KEY}`);
    });

    it("classifies a refused key, a missing /models and an unreachable endpoint", async () => {
      const signal = new AbortController().signal;
      fake.setModels(fail(401));
      const auth = await verifyProvider(fake.url, KEY, signal);
      expect(auth).to.deep.equal({ ok: false, probe: "auth", error: "API key rejected (401)", status: 401 });
      fake.setModels(fail(404));
      const unknown = await verifyProvider(fake.url, KEY, signal);
      expect(unknown).to.include({ ok: true, probe: "unknown", status: 404 });

      const gone = await startFakeProvider();
      await gone.close();
      const unreachable = await verifyProvider(gone.url, KEY, signal);
      expect(unreachable).to.include({ ok: false, probe: "unreachable" });
      expect(unreachable.error).to.match(/cannot connect/);
      expect(JSON.stringify([auth, unknown, unreachable])).not.to.contain(KEY);
    });

    it("bounds the probe by its timeout", async () => {
      // A server that accepts the request and never answers.
      const hang = createServer(() => {});
      await new Promise<void>((r) => hang.listen(0, "127.0.0.1", () => r()));
      try {
        const { port } = hang.address() as AddressInfo;
        const r = await verifyProvider(`http://127.0.0.1:${port}/v1`, KEY, new AbortController().signal, 100);
        expect(r).to.deep.equal({
          ok: false,
          probe: "unreachable",
          error: `no answer from http://127.0.0.1:${port}/v1 within 0.1 s`,
        });
      } finally {
        hang.closeAllConnections();
        await new Promise((r) => hang.close(r));
      }
    });
  });

  describe("ModelCache", () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), "agentd-models-"));
    });
    afterEach(() => rm(dir, { recursive: true, force: true }));

    it("is empty before any fetch and survives a restart once set", async () => {
      const file = () => join(dir, "sub", "models.json");
      expect(await new ModelCache(file).get()).to.deep.equal([]);
      await new ModelCache(file).set([{ id: "m1", contextWindow: 1000 }]);
      expect(JSON.parse(await readFile(file(), "utf8")).models).to.deep.equal([{ id: "m1", contextWindow: 1000 }]);
      expect(await new ModelCache(file).get()).to.deep.equal([{ id: "m1", contextWindow: 1000 }]);
    });
  });
});
