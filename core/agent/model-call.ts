import type { Provider, ProviderRequest } from "../contributions.js";
import type { SessionEvent } from "../events.js";
import type { StreamBlock } from "./types.js";

export interface CallOutcome {
  content: string;
  thinking: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  /** undefined when the stream ended without a finish reason (connection dropped). */
  finish: string | undefined;
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number; cacheReadTokens?: number };
  aborted: boolean;
  error?: Error;
  ttftMs?: number;
  generationMs: number;
}

/**
 * Streams one model call, publishing deltas as they arrive and keeping the live blocks up to date. Never throws:
 * abort and provider failures are reported in the outcome with whatever was streamed so far.
 */
export async function streamModelCall(
  provider: Provider,
  req: ProviderRequest,
  signal: AbortSignal,
  emit: (e: SessionEvent) => void,
  blocks: StreamBlock[],
): Promise<CallOutcome> {
  const out: CallOutcome = {
    content: "",
    thinking: "",
    toolCalls: [],
    finish: undefined,
    aborted: false,
    generationMs: 0,
  };
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  const t0 = performance.now();
  const append = (kind: StreamBlock["kind"], text: string) => {
    const last = blocks.at(-1);
    if (last && last.kind === kind) last.text += text;
    else blocks.push({ order: blocks.length, kind, text });
  };
  // A per-call signal: providers (and SDKs) may leave listeners on it, which must not pile up on the turn's signal.
  const call = new AbortController();
  const link = () => call.abort(signal.reason);
  signal.addEventListener("abort", link, { once: true });
  try {
    for await (const d of provider.stream(req, call.signal)) {
      if (signal.aborted) break;
      switch (d.type) {
        case "content":
          if (!d.text) break;
          out.ttftMs ??= performance.now() - t0;
          out.content += d.text;
          append("content", d.text);
          emit({ type: "token", text: d.text });
          break;
        case "reasoning":
          if (!d.text) break;
          out.ttftMs ??= performance.now() - t0;
          out.thinking += d.text;
          append("thinking", d.text);
          emit({ type: "thinking", text: d.text });
          break;
        case "tool_call": {
          let c = calls.get(d.index);
          if (!c) {
            c = { id: "", name: "", arguments: "" };
            calls.set(d.index, c);
          }
          if (d.id) c.id = d.id;
          if (d.name) c.name += d.name;
          if (d.argumentsDelta) c.arguments += d.argumentsDelta;
          break;
        }
        case "usage":
          out.usage = d.usage;
          break;
        case "retry":
          emit({ type: "retry", attempt: d.attempt, delayMs: d.delayMs, reason: d.reason });
          break;
        case "finish":
          out.finish = d.reason;
          break;
      }
    }
  } catch (err) {
    if (!signal.aborted) out.error = err instanceof Error ? err : new Error(String(err));
  } finally {
    signal.removeEventListener("abort", link);
  }
  out.aborted = signal.aborted;
  out.generationMs = performance.now() - t0;
  out.toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([i, c]) => ({ id: c.id || `call_${i}_${Date.now().toString(36)}`, name: c.name, arguments: c.arguments }));
  return out;
}
