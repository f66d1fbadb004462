import { expect } from "chai";
import OpenAI, { type APIError } from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import {
  type FakeProvider,
  fail,
  reset,
  startFakeProvider,
  text,
  tokens,
  tools,
  turn,
} from "../testing/fake-provider.js";

/** Reads a whole SDK stream, keeping every chunk. */
async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  return chunks;
}

/** Assembles streamed tool calls the way a client must: by index, id and name once, arguments appended. */
function assembleToolCalls(chunks: ChatCompletionChunk[]): Array<{ id: string; name: string; arguments: string }> {
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  for (const c of chunks) {
    for (const tc of c.choices[0]?.delta.tool_calls ?? []) {
      const slot = calls[tc.index] ?? { id: "", name: "", arguments: "" };
      calls[tc.index] = slot;
      if (tc.id) slot.id = tc.id;
      if (tc.function?.name) slot.name = tc.function.name;
      slot.arguments += tc.function?.arguments ?? "";
    }
  }
  return calls;
}

describe("fake provider", () => {
  let fake: FakeProvider;
  let client: OpenAI;

  beforeEach(async () => {
    fake = await startFakeProvider();
    client = new OpenAI({ baseURL: fake.url, apiKey: "sk-test-key", maxRetries: 0 });
  });
  afterEach(() => fake.close());

  const streamOf = (content = "hi") =>
    client.chat.completions.create({
      model: "fake-model",
      messages: [{ role: "user", content }],
      stream: true,
      stream_options: { include_usage: true },
    });

  it("streams content, reasoning, usage and a finish reason, and records the request and bearer", async () => {
    fake.script(
      turn(
        { reasoning: "let me think" },
        { content: "Hel" },
        { content: "lo" },
        { usage: { prompt_tokens: 7, completion_tokens: 2, cached_tokens: 3 } },
      ),
    );
    const chunks = await collect(await streamOf("say hello"));

    const deltas = chunks.map((c) => c.choices[0]?.delta as Record<string, unknown> | undefined);
    expect(deltas.map((d) => d?.reasoning_content).filter(Boolean)).to.deep.equal(["let me think"]);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).to.equal("Hello");
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).to.deep.equal(["stop"]);
    const last = chunks.at(-1);
    expect(last?.choices).to.deep.equal([]);
    expect(last?.usage).to.include({ prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 });
    expect(last?.usage?.prompt_tokens_details?.cached_tokens).to.equal(3);

    expect(fake.requests).to.have.length(1);
    expect(fake.requests[0]?.messages).to.deep.equal([{ role: "user", content: "say hello" }]);
    expect(fake.calls[0]?.headers.authorization).to.equal("Bearer sk-test-key");
    expect(fake.calls[0]?.scripted).to.equal(true);
  });

  it("omits usage when the request did not ask for it", async () => {
    fake.script(turn({ content: "x" }, { usage: { prompt_tokens: 1, completion_tokens: 1 } }));
    const stream = await client.chat.completions.create({
      model: "fake-model",
      messages: [{ role: "user", content: "x" }],
      stream: true,
    });
    const chunks = await collect(stream);
    expect(chunks.some((c) => c.usage)).to.equal(false);
  });

  it("streams tool calls split over several deltas that assemble by index", async () => {
    fake.script(
      tools([
        { name: "read", args: { path: "src/index.ts" }, id: "call_1" },
        { name: "bash", args: { command: "ls -la" } },
      ]),
    );
    const chunks = await collect(await streamOf());
    const toolDeltas = chunks.filter((c) => c.choices[0]?.delta.tool_calls);
    expect(toolDeltas.length).to.be.greaterThan(4);
    const calls = assembleToolCalls(chunks);
    expect(calls).to.have.length(2);
    expect(calls[0]).to.deep.equal({ id: "call_1", name: "read", arguments: '{"path":"src/index.ts"}' });
    expect(calls[1]?.name).to.equal("bash");
    expect(calls[1]?.id).to.match(/^call_fake_/);
    expect(JSON.parse(calls[1]?.arguments ?? "")).to.deep.equal({ command: "ls -la" });
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).to.deep.equal(["tool_calls"]);
  });

  it("cuts the connection mid-stream after delivering earlier chunks", async () => {
    fake.script([{ content: "partial" }, { cut: true }, { content: "never" }]);
    const seen: string[] = [];
    let failure: unknown;
    try {
      for await (const c of await streamOf()) seen.push(c.choices[0]?.delta.content ?? "");
    } catch (err) {
      failure = err;
    }
    expect(seen.join("")).to.equal("partial");
    expect(failure, "a cut stream fails the reader").to.be.instanceOf(Error);
  });

  it("answers scripted HTTP failures with status, body and headers", async () => {
    fake.script(fail(429, { headers: { "retry-after": "2" } }), fail(500), fail(401));
    const errors: APIError[] = [];
    for (let i = 0; i < 3; i++) {
      try {
        await streamOf();
      } catch (err) {
        errors.push(err as APIError);
      }
    }
    expect(errors.map((e) => e.status)).to.deep.equal([429, 500, 401]);
    expect(errors[0]?.headers?.get("retry-after")).to.equal("2");
    expect(errors[2]).to.be.instanceOf(OpenAI.AuthenticationError);
  });

  it("resets the connection before the first byte", async () => {
    fake.script(reset());
    let failure: unknown;
    try {
      await streamOf();
    } catch (err) {
      failure = err;
    }
    expect(failure).to.be.instanceOf(OpenAI.APIConnectionError);
    expect(fake.requests).to.have.length(1);
  });

  it("holds a stream until released and lets tests synchronise on request arrival", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    fake.script(turn({ content: "before " }, { waitFor: gate }, { content: "after" }));
    const reading = streamOf("wait").then(collect);
    const body = await fake.nextRequest();
    expect(body.messages[0]).to.deep.equal({ role: "user", content: "wait" });
    release();
    const chunks = await reading;
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).to.equal("before after");
  });

  it("nextRequest is a cursor: it returns requests that already arrived, in order", async () => {
    await collect(await streamOf("one"));
    await collect(await streamOf("two"));
    expect((await fake.nextRequest()).messages[0]?.content).to.equal("one");
    expect((await fake.nextRequest()).messages[0]?.content).to.equal("two");
    await expectRejection(fake.nextRequest(50), /did not arrive within 50 ms/);
  });

  it("answers unscripted requests with a default text and scriptFor ahead of the queue", async () => {
    fake.script(text("queued"));
    fake.scriptFor((b) => JSON.stringify(b.messages).includes("summarise"), text("summary"));
    const read = async (content: string) =>
      (await collect(await streamOf(content))).map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(await read("summarise this")).to.equal("summary");
    expect(await read("hello")).to.equal("queued");
    expect(fake.remaining).to.equal(0);
    expect(await read("again")).to.equal("Hello from the fake provider.");
    expect(fake.calls.at(-1)?.scripted).to.equal(false);
  });

  it("answers non-streaming requests with one JSON completion", async () => {
    fake.script(turn({ content: "Sum" }, { content: "mary" }, { usage: { prompt_tokens: 5, completion_tokens: 1 } }));
    const res = await client.chat.completions.create({
      model: "fake-model",
      messages: [{ role: "user", content: "summarise" }],
    });
    expect(res.choices[0]?.message.content).to.equal("Summary");
    expect(res.choices[0]?.finish_reason).to.equal("stop");
    expect(res.usage?.total_tokens).to.equal(6);
  });

  it("streams n-token benchmark turns", async () => {
    fake.script(tokens(50, { token: "x" }));
    const chunks = await collect(await streamOf());
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).to.equal("x".repeat(50));
    expect(chunks.at(-1)?.usage?.completion_tokens).to.equal(50);
  });

  it("lists models, default and configured, and can fail the listing", async () => {
    expect((await client.models.list()).data.map((m) => m.id)).to.deep.equal(["fake-model"]);
    fake.setModels(["a", { id: "b", owned_by: "acme", context_length: 8192 }]);
    const data = (await client.models.list()).data;
    expect(data.map((m) => [m.id, m.object, m.owned_by])).to.deep.equal([
      ["a", "model", "fake"],
      ["b", "model", "acme"],
    ]);
    expect((data[1] as unknown as Record<string, unknown>).context_length).to.equal(8192);
    fake.setModels(fail(503));
    await expectRejection(client.models.list(), /503/);
  });

  it("rejects a wrong bearer when started with an apiKey", async () => {
    const guarded = await startFakeProvider({ apiKey: "sk-right" });
    try {
      const wrong = new OpenAI({ baseURL: guarded.url, apiKey: "sk-wrong", maxRetries: 0 });
      await expectRejection(wrong.models.list(), /401/);
      const right = new OpenAI({ baseURL: guarded.url, apiKey: "sk-right", maxRetries: 0 });
      expect((await right.models.list()).data).to.have.length(1);
    } finally {
      await guarded.close();
    }
  });
});

async function expectRejection(p: Promise<unknown>, pattern: RegExp): Promise<void> {
  let failure: unknown;
  try {
    await p;
  } catch (err) {
    failure = err;
  }
  expect(failure, "expected a rejection").to.be.instanceOf(Error);
  expect((failure as Error).message).to.match(pattern);
}
