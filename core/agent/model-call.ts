import { monotonicMs } from "../clock.js";
import type { Provider, ProviderDelta, ProviderRequest } from "../contributions.js";
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
 * A model call whose request is under way: the provider's stream has been asked for its first delta (which sends
 * the request) but nothing of it is consumed yet. {@link streamModelCall} reads it; `cancel` drops it unread.
 */
export interface StartedCall {
  readonly next: Promise<IteratorResult<ProviderDelta>>;
  readonly rest: AsyncIterator<ProviderDelta>;
  readonly t0: number;
  /** Lets go of the turn's signal (the call has its own, linked to it). */
  unlink(): void;
  cancel(): void;
}

/** Sends a model call's request now; its deltas are read later by {@link streamModelCall}. */
export function startModelCall(provider: Provider, req: ProviderRequest, signal: AbortSignal): StartedCall {
  // A per-call signal: providers (and SDKs) may leave listeners on it, which must not pile up on the turn's signal.
  const call = new AbortController();
  const link = () => call.abort(signal.reason);
  signal.addEventListener("abort", link, { once: true });
  const unlink = () => signal.removeEventListener("abort", link);
  const t0 = monotonicMs();
  let rest: AsyncIterator<ProviderDelta>;
  let next: Promise<IteratorResult<ProviderDelta>>;
  try {
    rest = provider.stream(req, call.signal)[Symbol.asyncIterator]();
    next = rest.next();
  } catch (err) {
    // A provider that throws at once fails like one whose stream fails: reported in the call's outcome.
    rest = { next: () => Promise.reject(err) };
    next = Promise.reject(err);
  }
  // Read later (or never, when the turn fails first): not an unhandled rejection meanwhile.
  next.catch(() => undefined);
  return {
    next,
    rest,
    t0,
    unlink,
    cancel() {
      unlink();
      call.abort(new Error("model call dropped before it was read"));
      void rest.return?.(undefined)?.catch(() => undefined);
    },
  };
}

/**
 * Streams one model call, publishing deltas as they arrive and keeping the live blocks up to date. Never throws:
 * abort and provider failures are reported in the outcome with whatever was streamed so far.
 */
export async function streamModelCall(
  started: StartedCall,
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
  const { t0 } = started;
  const append = (kind: StreamBlock["kind"], text: string) => {
    const last = blocks.at(-1);
    if (last && last.kind === kind) last.text += text;
    else blocks.push({ order: blocks.length, kind, text });
  };
  try {
    for (let r = await started.next; !r.done; r = await started.rest.next()) {
      if (signal.aborted) break;
      const d = r.value;
      switch (d.type) {
        case "content":
          if (!d.text) break;
          out.ttftMs ??= monotonicMs() - t0;
          out.content += d.text;
          append("content", d.text);
          emit({ type: "token", text: d.text });
          break;
        case "reasoning":
          if (!d.text) break;
          out.ttftMs ??= monotonicMs() - t0;
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
    started.unlink();
    // Left early (abort): the stream is closed, its request cancelled.
    void started.rest.return?.(undefined)?.catch(() => undefined);
  }
  out.aborted = signal.aborted;
  out.generationMs = monotonicMs() - t0;
  out.toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([i, c]) => ({ id: c.id || `call_${i}_${Date.now().toString(36)}`, name: c.name, arguments: c.arguments }));
  return out;
}
