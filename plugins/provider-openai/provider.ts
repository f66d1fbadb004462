import type OpenAI from "openai";
import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import {
  type Dialect,
  detectDialect,
  type Logger,
  type ModelInfo,
  type Provider,
  type ProviderDelta,
  type ProviderRequest,
  reasoningOptionsFor,
  reasoningRequestFields,
} from "../../core/index.js";
import { sendChat } from "./chat-request.js";
import { ChunkReader } from "./chunk-reader.js";
import { dryRun } from "./dry-run.js";
import {
  abortableSleep,
  abortReason,
  type BackoffOptions,
  backoffDelay,
  classify,
  DEFAULT_BACKOFF,
  isAbort,
  isConnectionFailure,
  ProviderError,
} from "./retry.js";
import { decodeChatStream } from "./sse-decoder.js";

export interface OpenAIProviderSettings {
  baseURL?: string;
  apiKey?: string;
  model?: string;
}

export interface OpenAIProviderOptions {
  backoff?: Partial<BackoffOptions>;
  /** Bound of one `listModels` call (default 15 s). */
  listTimeoutMs?: number;
  /**
   * Bound of the wait for a chat response's headers, and of the silence between two chunks of its stream (default
   * 600 s, the openai SDK's own timeout).
   */
  timeoutMs?: number;
  log?: Logger;
}

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";
export const DEFAULT_TIMEOUT_MS = 600_000;

/** The SDK is loaded at the first provider call, not at boot (it is one of the heaviest modules). */
let sdk: Promise<typeof import("openai")> | undefined;
function loadSdk(): Promise<typeof import("openai")> {
  sdk ??= import("openai");
  return sdk;
}

/**
 * Creates an OpenAI client for an endpoint. A missing key is allowed (local servers need none): the SDK insists
 * on one, so a placeholder is given and the Authorization header removed instead of sending a fake bearer.
 */
export async function openAIClient(baseURL: string, apiKey: string | undefined, timeoutMs?: number): Promise<OpenAI> {
  const { default: OpenAIClient } = await loadSdk();
  return new OpenAIClient({
    baseURL,
    apiKey: apiKey || "no-key",
    // Retries are ours: they must be visible as `retry` deltas and stop once content has been streamed.
    maxRetries: 0,
    ...(timeoutMs !== undefined ? { timeout: timeoutMs } : {}),
    ...(apiKey ? {} : { defaultHeaders: { Authorization: null } }),
  });
}

/**
 * The chat-completions provider. `settings` may be a function so edits to the daemon's settings apply on the
 * next call without re-registering the provider.
 */
export function createOpenAIProvider(
  settings: OpenAIProviderSettings | (() => OpenAIProviderSettings),
  options: OpenAIProviderOptions = {},
): Provider {
  const read = typeof settings === "function" ? settings : () => settings;
  const backoff: BackoffOptions = { ...DEFAULT_BACKOFF, ...options.backoff };
  const listTimeoutMs = options.listTimeoutMs ?? 15_000;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let cached: { key: string; client: Promise<OpenAI> } | undefined;

  const connection = () => {
    const s = read();
    if (!s.baseURL && !s.apiKey) {
      throw new ProviderError(
        "No model provider is configured: connect one in the web UI's Settings, or set provider.baseURL and provider.apiKey in config.json, or OPENAI_BASE_URL and OPENAI_API_KEY",
      );
    }
    const baseURL = s.baseURL || DEFAULT_BASE_URL;
    const key = `${baseURL}\u0000${s.apiKey ?? ""}`;
    if (cached?.key !== key) cached = { key, client: openAIClient(baseURL, s.apiKey, timeoutMs) };
    return { client: cached.client, baseURL, apiKey: s.apiKey, model: s.model };
  };

  async function* stream(req: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderDelta> {
    const conn = connection();
    const { baseURL, apiKey, model } = conn;
    const params = buildParams(req, model, detectDialect(baseURL));
    const client = await conn.client;
    const sdk = await loadSdk();
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) throw abortReason(signal);
      let yielded = false;
      try {
        // The SDK builds the request and maps an error status (see chat-request); the body is decoded here.
        const response = await sendChat(client, sdk, params, signal);
        const reader = new ChunkReader();
        for await (const chunks of decodeChatStream(response, { idleTimeoutMs: timeoutMs })) {
          const deltas: ProviderDelta[] = [];
          let error: object | undefined;
          for (const chunk of chunks) {
            error = reader.read(chunk, deltas);
            if (error) break;
          }
          for (const delta of coalesce(deltas)) {
            yielded = true;
            yield delta;
          }
          // An error the provider reports inside a 200 stream, after whatever came before it.
          if (error) throw new sdk.APIError(undefined, error, undefined, response.headers());
        }
        // A stream may end quietly on abort; the caller must still see the abort.
        if (signal.aborted) throw abortReason(signal);
        const last: ProviderDelta[] = [];
        const cutOff = reader.end(last);
        if (cutOff) throw new ProviderError(cutOff);
        for (const delta of last) {
          yielded = true;
          yield delta;
        }
        return;
      } catch (err) {
        if (signal.aborted) throw abortReason(signal);
        if (isAbort(err)) throw err;
        if (yielded) {
          // Content already reached the user: a retry would duplicate it. A dropped connection ends the stream
          // without `finish` (the loop reports `disconnected`); an error the provider sent is reported as such.
          if (isConnectionFailure(err)) return;
          throw classify(err, apiKey, baseURL);
        }
        const failure = classify(err, apiKey, baseURL);
        if (!failure.retryable) throw failure;
        if (attempt >= backoff.maxAttempts) {
          throw new ProviderError(`${failure.message} (gave up after ${attempt} attempts)`, failure.status);
        }
        const delayMs = backoffDelay(attempt, backoff, failure.retryAfterMs);
        options.log?.warn({ attempt, delayMs, status: failure.status }, "provider call failed, retrying");
        yield { type: "retry", attempt, delayMs, reason: failure.message };
        await abortableSleep(delayMs, signal);
      }
    }
  }

  async function listModels(signal?: AbortSignal): Promise<ModelInfo[]> {
    const conn = connection();
    const { baseURL, apiKey } = conn;
    try {
      const client = await conn.client;
      const page = await client.models.list({ signal, timeout: listTimeoutMs });
      return page.data.map((m) => toModelInfo(m as unknown as Record<string, unknown>)).sort(byId);
    } catch (err) {
      if (signal?.aborted) throw abortReason(signal);
      throw classify(err, apiKey, baseURL);
    }
  }

  /**
   * Loads the SDK, builds the client of the configured endpoint, and makes one dry-run request with it to a local
   * throwaway server (`dryRun`): the first turn then finds the SDK, node's HTTP client and this code path loaded and
   * compiled. Nothing is sent to the provider.
   */
  async function warmUp(): Promise<void> {
    const sdk = await loadSdk();
    const s = read();
    if (!s.baseURL && !s.apiKey) return;
    await dryRun(await connection().client, sdk);
  }

  return {
    id: "openai",
    description: "Any OpenAI-compatible chat-completions endpoint",
    stream,
    listModels,
    warmUp,
  };
}

function buildParams(
  req: ProviderRequest,
  defaultModel: string | undefined,
  dialect: Dialect,
): ChatCompletionCreateParamsStreaming {
  // "default": the session was made while no model was configured; it follows the one configured since.
  const model = (req.model === "default" ? undefined : req.model) || defaultModel || req.model;
  if (!model) throw new ProviderError("no model configured: set AGENTD_MODEL or provider.model in the config");
  const params: ChatCompletionCreateParamsStreaming = {
    model,
    // ChatMessage is the wire shape plus provider extensions (reasoning_content) that compatible servers expect back.
    messages: req.messages as unknown as ChatCompletionMessageParam[],
    stream: true,
    stream_options: { include_usage: true },
  };
  if (req.tools && req.tools.length > 0) {
    params.tools = req.tools as ChatCompletionTool[];
    params.tool_choice = "auto";
  }
  // on/off is a switch of hybrid-thinking models only; "off" of an effort-style model means: ask for no reasoning.
  const choice = req.reasoningEffort;
  const isSwitch = choice === "on" || choice === "off";
  if (choice && (!isSwitch || reasoningOptionsFor(model, dialect).kind === "toggle")) {
    Object.assign(params, reasoningRequestFields(choice, dialect));
  }
  return params;
}

/**
 * Joins adjacent text deltas of one kind (content, reasoning) among those of one network read: they reached the
 * daemon together, so one `token` event carries them at no cost in latency, and a daemon busy with many streams does
 * less work per token the further behind it is. Chunks of different reads are never joined.
 */
export function coalesce(deltas: ProviderDelta[]): ProviderDelta[] {
  if (deltas.length < 2) return deltas;
  const out: ProviderDelta[] = [];
  let text: (ProviderDelta & { type: "content" | "reasoning" }) | undefined;
  for (const d of deltas) {
    if (d.type !== "content" && d.type !== "reasoning") {
      text = undefined;
      out.push(d);
    } else if (text?.type === d.type) text.text += d.text;
    else {
      // A copy: the joined text must not change the delta the caller passed in.
      const copy: ProviderDelta & { type: "content" | "reasoning" } = { type: d.type, text: d.text };
      text = copy;
      out.push(copy);
    }
  }
  return out;
}

/** Maps a `/models` entry, reading the context-window and reasoning hints compatible servers add. */
export function toModelInfo(m: Record<string, unknown>): ModelInfo {
  const info: ModelInfo = { id: String(m.id) };
  if (typeof m.owned_by === "string" && m.owned_by) info.ownedBy = m.owned_by;
  const topProvider = m.top_provider as { context_length?: unknown } | undefined;
  const window = [m.context_length, m.context_window, m.max_context_length, topProvider?.context_length].find(
    (v): v is number => typeof v === "number" && v > 0,
  );
  if (window !== undefined) info.contextWindow = window;
  const params = Array.isArray(m.supported_parameters) ? m.supported_parameters : [];
  if ((m.reasoning !== undefined && m.reasoning !== null) || params.includes("reasoning")) {
    info.reasoningSupported = true;
  }
  return info;
}

function byId(a: ModelInfo, b: ModelInfo): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
