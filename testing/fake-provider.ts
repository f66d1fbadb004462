import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { answerChat, readBody, sendFailure, sendJson } from "./fake-answers.js";
import { type ChatRequestBody, type FailureTurn, type Turn, type TurnInput, text } from "./fake-turns.js";

export * from "./fake-turns.js";

/**
 * A real OpenAI-compatible chat-completions server on 127.0.0.1 (port 0) that answers from a script.
 * Tests and benchmarks drive the daemon against it, so streaming, tool-call assembly, usage, failures and dropped
 * connections go through real sockets and the real `openai` SDK rather than mocks.
 */

/** Every HTTP request the fake received (chat and models). Headers are kept for assertions only, never logged. */
export interface RecordedCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** For chat requests: whether a scripted turn answered it (false: the default reply). */
  scripted?: boolean;
}

export interface ModelSpec {
  id: string;
  owned_by?: string;
  /** Extra fields some providers add (context_length, ...). */
  [extra: string]: unknown;
}

export interface FakeProviderOptions {
  /** The reply to unscripted chat requests (default "Hello from the fake provider."). */
  defaultReply?: string;
  /** When set, requests without `Authorization: Bearer <apiKey>` get a 401. */
  apiKey?: string;
}

export interface FakeProvider {
  /** Base URL ending in `/v1`, to give to an OpenAI client as `baseURL`. */
  readonly url: string;
  /** Parsed bodies of every POST /v1/chat/completions, in arrival order. */
  readonly requests: ChatRequestBody[];
  /** Every request with its headers, in arrival order. */
  readonly calls: RecordedCall[];
  /** Scripted turns not consumed yet (queue plus `scriptFor` entries). */
  readonly remaining: number;
  /** Queues turns answering the next chat requests in order. */
  script(...turns: TurnInput[]): void;
  /** Turns that answer, in order, the requests matching `predicate`, ahead of the queue. */
  scriptFor(predicate: (body: ChatRequestBody) => boolean, ...turns: TurnInput[]): void;
  /** Drops every scripted turn not consumed yet (a test that failed half-way leaves none to the next). */
  clearScript(): void;
  /** What GET /v1/models answers: a model list, or a failure. */
  setModels(models: Array<string | ModelSpec> | FailureTurn): void;
  /**
   * The next chat request body not yet handed out by `nextRequest` (a cursor over `requests`), waiting for it
   * to arrive if needed. Rejects after `timeoutMs`.
   */
  nextRequest(timeoutMs?: number): Promise<ChatRequestBody>;
  close(): Promise<void>;
}

interface Waiter {
  index: number;
  settle(body: ChatRequestBody | undefined, error?: Error): void;
}

/* ---------- the server ---------- */

export async function startFakeProvider(opts: FakeProviderOptions = {}): Promise<FakeProvider> {
  const requests: ChatRequestBody[] = [];
  const calls: RecordedCall[] = [];
  const queue: Turn[] = [];
  const matchers: Array<{ predicate: (body: ChatRequestBody) => boolean; turns: Turn[] }> = [];
  let models: Array<string | ModelSpec> | FailureTurn = ["fake-model"];
  let cursor = 0;
  const waiters: Waiter[] = [];
  const defaultReply = opts.defaultReply ?? "Hello from the fake provider.";

  const takeTurn = (body: ChatRequestBody): { turn: Turn; scripted: boolean } => {
    for (const m of matchers) {
      if (m.turns.length > 0 && m.predicate(body)) return { turn: m.turns.shift() as Turn, scripted: true };
    }
    const next = queue.shift();
    return next ? { turn: next, scripted: true } : { turn: text(defaultReply), scripted: false };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req);
    const path = new URL(req.url ?? "/", "http://fake").pathname.replace(/\/+$/, "");
    let body: unknown;
    try {
      body = raw.length > 0 ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    const call: RecordedCall = { method: req.method ?? "GET", path, headers: { ...req.headers }, body };
    calls.push(call);
    const isChat = call.method === "POST" && path === "/v1/chat/completions";
    if (isChat) {
      requests.push(body as ChatRequestBody);
      for (const w of waiters.filter((x) => x.index < requests.length)) w.settle(requests[w.index]);
    }
    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      return sendFailure(res, { status: 401 });
    }
    if (isChat) {
      const { turn: t, scripted } = takeTurn(body as ChatRequestBody);
      call.scripted = scripted;
      return answerChat(t, body as ChatRequestBody, res);
    }
    if (call.method === "GET" && path === "/v1/models") {
      if (!Array.isArray(models)) return sendFailure(res, models);
      const data = models.map((m) => {
        const spec = typeof m === "string" ? { id: m } : m;
        return { object: "model", created: 0, owned_by: "fake", ...spec };
      });
      return sendJson(res, 200, { object: "list", data });
    }
    sendJson(res, 404, { error: { message: `fake provider: no route ${call.method} ${path}`, type: "not_found" } });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `fake provider bug: ${String(err)}` } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const toTurn = (t: TurnInput): Turn => (Array.isArray(t) ? { steps: t } : t);

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    calls,
    get remaining() {
      return queue.length + matchers.reduce((n, m) => n + m.turns.length, 0);
    },
    script(...turns) {
      queue.push(...turns.map(toTurn));
    },
    scriptFor(predicate, ...turns) {
      matchers.push({ predicate, turns: turns.map(toTurn) });
    },
    clearScript() {
      queue.length = 0;
      matchers.length = 0;
    },
    setModels(list) {
      models = list;
    },
    nextRequest(timeoutMs = 10_000) {
      const index = cursor++;
      const ready = requests[index];
      if (ready !== undefined) return Promise.resolve(ready);
      return new Promise<ChatRequestBody>((resolve, reject) => {
        const waiter: Waiter = {
          index,
          settle: (b, e) => {
            clearTimeout(timer);
            waiters.splice(waiters.indexOf(waiter), 1);
            if (b) resolve(b);
            else reject(e);
          },
        };
        const timer = setTimeout(
          () =>
            waiter.settle(
              undefined,
              new Error(`fake provider: chat request #${index + 1} did not arrive within ${timeoutMs} ms`),
            ),
          timeoutMs,
        );
        waiters.push(waiter);
      });
    },
    async close() {
      for (const w of [...waiters]) w.settle(undefined, new Error("fake provider closed"));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
