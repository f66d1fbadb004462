import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer, globalAgent } from "node:https";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { expect } from "chai";
import * as sdk from "openai";
import { sendChat } from "../plugins/provider-openai/chat-request.js";
import { openAIClient } from "../plugins/provider-openai/provider.js";
import { decodeChatStream } from "../plugins/provider-openai/sse-decoder.js";
import { TLS_CERT, TLS_KEY } from "./support/tls.js";

const BODY = { model: "m", messages: [{ role: "user" as const, content: "hi" }], stream: true as const };
const CHUNK = 'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\ndata: [DONE]\n\n';

/** A local endpoint answering with `handle` (over TLS with `tls`); counts the TCP connections it accepted. */
async function endpoint(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void, tls = false) {
  let connections = 0;
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => handle(req, res, body));
  };
  const server: Server = tls ? createTlsServer({ cert: TLS_CERT, key: TLS_KEY }, listener) : createServer(listener);
  server.on(tls ? "secureConnection" : "connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `${tls ? "https" : "http"}://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("sendChat: the SDK builds the chat request, node:http carries it", () => {
  it("sends the SDK's request (path, auth, JSON body) and keeps the connection for the next call", async () => {
    const seen: Array<{ url?: string; auth?: string; body: string }> = [];
    const ep = await endpoint((req, res, body) => {
      seen.push({ url: req.url, auth: req.headers.authorization, body });
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(CHUNK);
    });
    try {
      const client = await openAIClient(ep.url, "sk-test");
      for (let i = 0; i < 2; i++) {
        const res = await sendChat(client, sdk, BODY, new AbortController().signal);
        const chunks: unknown[] = [];
        for await (const c of decodeChatStream(res)) chunks.push(...c);
        expect(chunks).to.have.length(1);
      }
      expect(seen).to.have.length(2);
      expect(seen[0]?.url).to.equal("/v1/chat/completions");
      expect(seen[0]?.auth).to.equal("Bearer sk-test");
      expect(JSON.parse(seen[0]?.body ?? "")).to.deep.equal(BODY);
      expect(ep.connections()).to.equal(1);
    } finally {
      await ep.close();
    }
  });

  it("builds the request's head (URL, auth, the SDK's headers) once per client; each call sends its own body", async () => {
    const seen: Array<{ headers: Record<string, unknown>; body: string }> = [];
    const ep = await endpoint((req, res, body) => {
      seen.push({ headers: { ...req.headers }, body });
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(CHUNK);
    });
    try {
      const client = await openAIClient(ep.url, "sk-test");
      let builds = 0;
      const build = client.buildRequest.bind(client);
      client.buildRequest = (...args: Parameters<typeof build>) => {
        builds++;
        return build(...args);
      };
      const bodies = [BODY, { ...BODY, messages: [...BODY.messages, { role: "user" as const, content: "ünïcode" }] }];
      for (const body of bodies) {
        const res = await sendChat(client, sdk, body, new AbortController().signal);
        for await (const _ of decodeChatStream(res)) {
          // drained
        }
      }
      expect(builds).to.equal(1);
      expect(seen.map((r) => JSON.parse(r.body))).to.deep.equal(bodies);
      for (const r of seen) expect(r.headers["content-length"]).to.equal(String(Buffer.byteLength(r.body)));
      const [first, second] = seen.map(({ headers: { "content-length": _, ...rest } }) => rest);
      expect(second).to.deep.equal(first);
      expect(first).to.include({ authorization: "Bearer sk-test", "content-type": "application/json" });
      expect(first?.["user-agent"]).to.match(/^OpenAI\/JS /);
      // Another client (another key) gets its own head.
      const other = await openAIClient(ep.url, "sk-other");
      const res = await sendChat(other, sdk, BODY, new AbortController().signal);
      for await (const _ of decodeChatStream(res)) {
        // drained
      }
      expect(seen.at(-1)?.headers.authorization).to.equal("Bearer sk-other");
    } finally {
      await ep.close();
    }
  });

  it("speaks HTTPS to an https endpoint", async () => {
    const ep = await endpoint((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(req.headers.authorization === "Bearer sk-test" ? CHUNK : "data: [DONE]\n\n");
    }, true);
    // The test's certificate is trusted by this process's HTTPS agent for the duration of the test.
    const ca = globalAgent.options.ca;
    globalAgent.options.ca = TLS_CERT;
    try {
      const client = await openAIClient(ep.url, "sk-test");
      const res = await sendChat(client, sdk, BODY, new AbortController().signal);
      const chunks: unknown[] = [];
      for await (const c of decodeChatStream(res)) chunks.push(...c);
      expect(chunks).to.have.length(1);
      expect(ep.connections()).to.equal(1);
    } finally {
      globalAgent.options.ca = ca;
      globalAgent.destroy();
      await ep.close();
    }
  });

  it("reads a compressed answer although it asks for none", async () => {
    let asked: string | undefined = "";
    const ep = await endpoint((req, res) => {
      asked = req.headers["accept-encoding"];
      res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" });
      res.end(gzipSync(CHUNK));
    });
    try {
      const client = await openAIClient(ep.url, "sk-test");
      const res = await sendChat(client, sdk, BODY, new AbortController().signal);
      const chunks: unknown[] = [];
      for await (const c of decodeChatStream(res)) chunks.push(...c);
      expect(chunks).to.deep.equal([{ choices: [{ index: 0, delta: { content: "x" } }] }]);
      expect(asked).to.equal(undefined);
    } finally {
      await ep.close();
    }
  });

  it("turns an error status into the SDK's own error, with the provider's message and headers", async () => {
    const ep = await endpoint((_req, res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after-ms": "20" });
      res.end(JSON.stringify({ error: { message: "slow down", type: "rate_limit" } }));
    });
    try {
      const client = await openAIClient(ep.url, "sk-test");
      const err = await sendChat(client, sdk, BODY, new AbortController().signal).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(sdk.RateLimitError);
      const apiErr = err as InstanceType<typeof sdk.RateLimitError>;
      expect(apiErr.status).to.equal(429);
      expect(apiErr.message).to.contain("slow down");
      expect(apiErr.headers?.get("retry-after-ms")).to.equal("20");
    } finally {
      await ep.close();
    }
  });

  it("keeps a body that is not JSON as the error's message", async () => {
    const ep = await endpoint((_req, res) => {
      res.writeHead(502, { "content-type": "text/plain" });
      res.end("bad gateway upstream");
    });
    try {
      const client = await openAIClient(ep.url, undefined);
      const err = await sendChat(client, sdk, BODY, new AbortController().signal).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(sdk.InternalServerError);
      expect((err as Error).message).to.contain("bad gateway upstream");
    } finally {
      await ep.close();
    }
  });

  it("bounds the wait for the response's headers by the client's timeout", async () => {
    const ep = await endpoint(() => {
      // Never answers.
    });
    try {
      const client = await openAIClient(ep.url, "sk-test", 50);
      const err = await sendChat(client, sdk, BODY, new AbortController().signal).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(sdk.APIConnectionTimeoutError);
    } finally {
      await ep.close();
    }
  });

  it("rejects at once when aborted before the answer", async () => {
    let arrived: () => void = () => {};
    const requested = new Promise<void>((resolve) => (arrived = resolve));
    const ep = await endpoint(() => arrived());
    try {
      const client = await openAIClient(ep.url, "sk-test");
      const ac = new AbortController();
      const pending = sendChat(client, sdk, BODY, ac.signal).catch((e: unknown) => e);
      await requested;
      ac.abort();
      const err = await pending;
      expect((err as Error).name).to.equal("AbortError");
    } finally {
      await ep.close();
    }
  });
});
