import { expect } from "chai";
import fc from "fast-check";
import { decodeChatStream, SseEventParser, StreamError } from "../plugins/provider-openai/sse-decoder.js";

const enc = new TextEncoder();

function parseAll(reads: Uint8Array[]): Array<{ event: string | null; data: string }> {
  const p = new SseEventParser();
  const out: Array<{ event: string | null; data: string }> = [];
  for (const r of reads) p.push(r, out);
  p.push(undefined, out);
  return out;
}

function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(prev, p));
    prev = p;
  }
  return out;
}

async function collect(text: string): Promise<unknown[]> {
  const out: unknown[] = [];
  const response = { body: new Response(text).body as ReadableStream<Uint8Array>, headers: () => new Headers() };
  for await (const chunks of decodeChatStream(response)) out.push(...chunks);
  return out;
}

describe("provider-openai stream decoder", () => {
  it("parses LF, CRLF and CR line ends, comments, multi-line data and event names", () => {
    const text = ": keep-alive\r\ndata: a\r\ndata:b\r\n\r\nevent: x\rdata: {}\r\rdata: last\n\n";
    expect(parseAll([enc.encode(text)])).to.deep.equal([
      { event: null, data: "a\nb" },
      { event: "x", data: "{}" },
      { event: null, data: "last" },
    ]);
  });

  it("gives the same events however the bytes are split across reads (CRLF and UTF-8 split too)", () => {
    const text = 'data: {"t":"héllo 🙂"}\r\n\r\n: c\ndata: x\n\ndata: y\r\rdata: z\r\n\r\n';
    const bytes = enc.encode(text);
    const whole = parseAll([bytes]);
    expect(whole).to.have.length(4);
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
        expect(parseAll(splitAt(bytes, cuts))).to.deep.equal(whole);
      }),
    );
  });

  it("dispatches a last event without the closing blank line", () => {
    expect(parseAll([enc.encode("data: tail")])).to.deep.equal([{ event: null, data: "tail" }]);
  });

  it("yields JSON chunks, ignores everything after [DONE] and thread.* events", async () => {
    const chunks = await collect(
      'data: {"n":1}\n\nevent: thread.run\ndata: {"n":9}\n\ndata: {"n":2}\n\ndata: [DONE]\n\ndata: {"n":3}\n\n',
    );
    expect(chunks).to.deep.equal([{ n: 1 }, { n: 2 }]);
  });

  it("passes an error chunk on as a chunk; the data of event: error becomes one", async () => {
    expect(
      await collect('data: {"n":1}\n\ndata: {"error":{"message":"overloaded"},"usage":{"total_tokens":3}}\n\n'),
    ).to.deep.equal([{ n: 1 }, { error: { message: "overloaded" }, usage: { total_tokens: 3 } }]);
    expect(await collect('event: error\ndata: {"error":{"message":"overloaded"}}\n\n')).to.deep.equal([
      { error: { message: "overloaded" } },
    ]);
    expect(await collect('event: error\ndata: {"message":"overloaded"}\n\n')).to.deep.equal([
      { error: { message: "overloaded" } },
    ]);
    expect(await collect("event: error\ndata: upstream went away\n\n")).to.deep.equal([
      { error: { message: "upstream went away" } },
    ]);
  });

  it("fails clearly on data that is not JSON, a chunk cut in the middle, and an answer without any chunk", async () => {
    const failures: Array<[string, RegExp]> = [
      ["data: <html>oops</html>\n\n", /not JSON: "<html>oops<\/html>"/],
      ['data: {"choices":[{"delta":{"content":"He', /not JSON: "\{"choices":\[\{"delta":\{"content":"He"/],
      ["data: 42\n\n", /not a JSON object: "42"/],
      [
        "<!doctype html><p>Bad gateway</p>",
        /not a chat-completions event stream: it sent "<!doctype html><p>Bad gateway<\/p>"/,
      ],
      ["", /not a chat-completions event stream: it sent nothing/],
      [": keep-alive\n\n", /it sent nothing/],
    ];
    for (const [text, message] of failures) {
      let caught: unknown;
      try {
        await collect(text);
      } catch (err) {
        caught = err;
      }
      expect(caught, text).to.be.instanceOf(StreamError);
      expect((caught as Error).message, text).to.match(message);
    }
  });
});
