import { request as httpRequest, type IncomingMessage } from "node:http";
import { pipeline, type Readable } from "node:stream";
import type OpenAI from "openai";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import type { ChatResponse } from "./sse-decoder.js";

/**
 * node:https (with node:tls) and node:zlib are loaded when first needed, by an https provider (its warm-up, see
 * dry-run.ts) or a compressed answer: loaded at start, they were ~7 ms of every cold start (node compiles a module
 * loaded after the daemon set its V8 flags without its own code cache: host/v8-flags.ts).
 */
export const httpsModule = () => process.getBuiltinModule("node:https");
const zlib = () => process.getBuiltinModule("node:zlib");

/** An error status's body is read up to this size for its message. */
const MAX_ERROR_BODY = 1024 * 1024;

/** What the SDK builds for each chat request of one client, the body aside. */
interface RequestHead {
  target: URL;
  /** Auth and the SDK's own headers (content type, user agent, platform); no content-length. */
  headers: Record<string, string>;
  timeout: number;
}

/**
 * A client's options (base URL, key, timeout) are fixed when it is made, so the head of its chat requests is the
 * same every time: the SDK builds it once, on the client's first request.
 */
const heads = new WeakMap<OpenAI, RequestHead>();

async function headOf(client: OpenAI, body: ChatCompletionCreateParamsStreaming): Promise<RequestHead> {
  let head = heads.get(client);
  if (head) return head;
  const { req, url, timeout } = await client.buildRequest({ method: "post", path: "/chat/completions", body });
  const headers: Record<string, string> = {};
  new Headers(req.headers).forEach((value, name) => {
    if (name !== "content-length") headers[name] = value;
  });
  head = { target: new URL(url), headers, timeout };
  heads.set(client, head);
  return head;
}

/**
 * Sends one streamed chat-completions request and resolves with the response, whose body is the event stream
 * (decompressed if the server compressed it, which it should not: no `accept-encoding` is sent).
 * The SDK builds the request's head (`buildRequest`: URL, headers with auth, timeout; once per client, see
 * `headOf`) and an error status becomes its own `APIError` (`APIError.generate`, as `create()` throws it).
 * node:http(s) carries it, on the global keep-alive agents: Node's fetch under `create()` cost about 0.4 ms per
 * turn on the way to the first token, before the request left and after the answer arrived (docs/benchmarks.md,
 * issue 16), and the SDK's build of the head ~0.8 ms (issue 27). Like the SDK, the timeout bounds the wait for the
 * response's headers; redirects are not followed (an API endpoint answers where it is asked).
 */
export async function sendChat(
  client: OpenAI,
  sdk: typeof import("openai"),
  body: ChatCompletionCreateParamsStreaming,
  signal: AbortSignal,
): Promise<ChatResponse> {
  const head = await headOf(client, body);
  // The SDK's JSON body of a plain object is exactly this.
  const payload = JSON.stringify(body);
  const headers = { ...head.headers, "content-length": String(Buffer.byteLength(payload)) };
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const send = head.target.protocol === "https:" ? httpsModule().request : httpRequest;
    const request = send(head.target, { method: "POST", headers, signal }, (r) => {
      clearTimeout(timer);
      resolve(r);
    });
    const timer = setTimeout(() => request.destroy(new sdk.APIConnectionTimeoutError()), head.timeout);
    request.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    request.end(payload);
  });
  const status = res.statusCode ?? 0;
  const stream = decoded(res);
  const response = { body: stream, headers: () => headersOf(res), cancel: (reason: Error) => stream.destroy(reason) };
  if (status >= 200 && status < 300) return response;
  const text = await readText(response.body).catch(() => "");
  let json: object | undefined;
  try {
    json = JSON.parse(text) as object;
  } catch {
    json = undefined;
  }
  throw sdk.APIError.generate(status, json, json ? undefined : text, headersOf(res));
}

/** The body, through a decompressor when the server compressed it anyway. */
function decoded(res: IncomingMessage): Readable {
  const encoding = String(res.headers["content-encoding"] ?? "").toLowerCase();
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? zlib().createGunzip()
      : encoding === "deflate"
        ? zlib().createInflate()
        : encoding === "br"
          ? zlib().createBrotliDecompress()
          : undefined;
  // A failure of either side (or the reader stopping) destroys both; the reader sees the error.
  return decoder ? pipeline(res, decoder, () => {}) : res;
}

/** The response's headers as a `Headers` (what the SDK's errors carry, e.g. for retry-after). */
function headersOf(res: IncomingMessage): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    headers.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
  }
  return headers;
}

async function readText(body: Readable): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (size + chunk.length > MAX_ERROR_BODY) break;
    parts.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(parts).toString("utf8");
}
