import type { ProviderDelta } from "../../core/index.js";
import { InlineReasoning } from "./inline-reasoning.js";

/**
 * Reads the chunks of one streamed chat completion as compatible servers really send them (see
 * test/fixtures/provider-streams/SOURCES.md) and turns them into the deltas the agent loop consumes:
 * - reasoning from `reasoning_content`, `reasoning`, `reasoning_details[].text`, typed `thinking` content parts, or
 *   inline in `content` (`<think>`, harmony channels: inline-reasoning.ts); one source per stream, so reasoning a
 *   server sends twice (MiniMax: the field and `<think>`) is shown and stored once;
 * - content as a string or as typed parts;
 * - tool calls with or without `index`, with empty `id`/`name` on continuations, a name-only first delta, whole
 *   calls in one chunk, parallel calls (also several ids under one index);
 * - the first `finish_reason` only (a repeated finish chunk adds nothing but its usage);
 * - usage wherever it arrives (the last one counts), `x_groq.usage` too;
 * - an `error` inside the stream, returned so the caller can report the provider's own message.
 * Only the first choice is read (n = 1). Chunks are plain JSON: nothing is trusted to have the documented types.
 */
export class ChunkReader {
  private finish: string | undefined;
  private source: "field" | "inline" | undefined;
  private out: ProviderDelta[] = [];
  private readonly inline = new InlineReasoning((kind, text) => this.text(kind, text, "inline"));
  /** Our slots (the indexes the loop assembles by) by the index the server gave; -1: calls without one. */
  private readonly slots = new Map<number, number>();
  private readonly calls: Array<{ id: string; name: string; args: string }> = [];
  private lastSlot = -1;

  /** Maps one chunk, appending its deltas to `out`; returns the error object when the chunk reports one. */
  read(chunk: unknown, out: ProviderDelta[]): { message?: unknown; code?: unknown } | undefined {
    if (chunk === null || typeof chunk !== "object") return undefined;
    this.out = out;
    const c = chunk as Record<string, unknown>;
    const choices = Array.isArray(c.choices) ? (c.choices as Array<Record<string, unknown> | null>) : undefined;
    if (choices && choices.length > 0 && this.finish === undefined) {
      const choice = choices.find((x) => x?.index === 0) ?? choices[0];
      if (choice && typeof choice === "object") this.choice(choice);
    }
    const usage = usageOf(c);
    if (usage) out.push(usage);
    const error = c.error;
    if (error !== undefined && error !== null && error !== false) {
      return typeof error === "object" ? (error as { message?: unknown }) : { message: String(error) };
    }
    return undefined;
  }

  /**
   * The stream ended cleanly (`[DONE]`, or the body's end). Without a finish reason the turn still ends normally,
   * unless a tool call was left incomplete: then it was cut off, and nothing half-assembled may run.
   */
  end(out: ProviderDelta[]): string | undefined {
    this.out = out;
    if (this.finish !== undefined) return undefined;
    this.inline.end();
    for (const call of this.calls) {
      if (!call.name || !isJson(call.args)) return "the provider's stream ended in the middle of a tool call";
    }
    this.finish = this.calls.length > 0 ? "tool_calls" : "stop";
    out.push({ type: "finish", reason: this.finish });
    return undefined;
  }

  private choice(choice: Record<string, unknown>): void {
    const delta = (choice.delta ?? choice.message) as Record<string, unknown> | undefined;
    if (delta && typeof delta === "object") {
      const reasoning =
        nonEmpty(delta.reasoning_content) ?? nonEmpty(delta.reasoning) ?? detailsText(delta.reasoning_details);
      if (reasoning) this.text("reasoning", reasoning, "field");
      const content = delta.content;
      if (typeof content === "string") {
        if (content.length > 0) this.inline.push(content);
      } else if (Array.isArray(content)) this.parts(content);
      if (Array.isArray(delta.tool_calls)) for (const tc of delta.tool_calls) this.toolCall(tc);
    }
    const reason = choice.finish_reason;
    if (typeof reason === "string" && reason.length > 0) {
      this.inline.end();
      this.finish = reason;
      this.out.push({ type: "finish", reason });
    }
  }

  /** Typed content parts (Mistral): `{type:"text", text}` and `{type:"thinking", thinking: [{type:"text", text}]}`. */
  private parts(parts: unknown[]): void {
    for (const p of parts) {
      if (p === null || typeof p !== "object") continue;
      const part = p as Record<string, unknown>;
      if (part.type === "text" && typeof part.text === "string") this.inline.push(part.text);
      else if (part.type === "thinking") {
        const t = part.thinking;
        const text = typeof t === "string" ? t : Array.isArray(t) ? textsOf(t) : "";
        if (text) this.text("reasoning", text, "field");
      }
    }
  }

  private text(kind: "content" | "reasoning", text: string, from: "field" | "inline"): void {
    if (kind === "reasoning") {
      // One source of reasoning per stream: the other one, when a server sends both, is a copy.
      if (this.source !== undefined && this.source !== from) return;
      this.source = from;
    }
    this.out.push({ type: kind, text });
  }

  private toolCall(raw: unknown): void {
    if (raw === null || typeof raw !== "object") return;
    const tc = raw as Record<string, unknown>;
    const fn = (tc.function ?? {}) as Record<string, unknown>;
    const id = typeof tc.id === "string" ? tc.id : "";
    const name = typeof fn.name === "string" ? fn.name : "";
    const args =
      typeof fn.arguments === "string"
        ? fn.arguments
        : fn.arguments !== undefined && fn.arguments !== null
          ? JSON.stringify(fn.arguments)
          : "";
    const key = typeof tc.index === "number" ? tc.index : -1;
    let slot = key === -1 ? this.lastSlot : (this.slots.get(key) ?? -1);
    const current = slot >= 0 ? this.calls[slot] : undefined;
    // A new call: an index not seen yet, or another id where one is known (parallel calls under one index or none).
    if (!current || (id && current.id && id !== current.id)) {
      slot = this.calls.length;
      this.calls.push({ id: "", name: "", args: "" });
      this.slots.set(key, slot);
    }
    this.lastSlot = slot;
    const call = this.calls[slot] as { id: string; name: string; args: string };
    const d: ProviderDelta & { type: "tool_call" } = { type: "tool_call", index: slot };
    if (id && !call.id) d.id = call.id = id;
    // Some servers repeat the whole name on every delta; others could stream it in pieces.
    if (name && name !== call.name) {
      d.name = name;
      call.name += name;
    }
    if (args) {
      d.argumentsDelta = args;
      call.args += args;
    }
    this.out.push(d);
  }
}

function nonEmpty(v: unknown): string | undefined {
  return typeof v === "string" && v.length > 0 ? v : undefined;
}

/** OpenRouter's `reasoning_details`: `reasoning.text` (text) and `reasoning.summary` (summary) entries. */
function detailsText(v: unknown): string | undefined {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  let out = "";
  for (const d of v) {
    if (d === null || typeof d !== "object") continue;
    const e = d as Record<string, unknown>;
    if (typeof e.text === "string") out += e.text;
    else if (typeof e.summary === "string") out += e.summary;
  }
  return out || undefined;
}

function textsOf(items: unknown[]): string {
  let out = "";
  for (const i of items) {
    if (typeof i === "string") out += i;
    else if (i !== null && typeof i === "object" && typeof (i as { text?: unknown }).text === "string") {
      out += (i as { text: string }).text;
    }
  }
  return out;
}

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** The usage of a chunk (top level, else Groq's `x_groq.usage`), with the cached prompt tokens wherever servers put them. */
function usageOf(c: Record<string, unknown>): (ProviderDelta & { type: "usage" }) | undefined {
  const raw = (c.usage ?? (c.x_groq as { usage?: unknown } | undefined)?.usage) as Record<string, unknown> | undefined;
  if (raw === null || typeof raw !== "object") return undefined;
  const prompt = num(raw.prompt_tokens) ?? 0;
  const completion = num(raw.completion_tokens) ?? 0;
  const details = raw.prompt_tokens_details as Record<string, unknown> | undefined | null;
  const cached = num(details?.cached_tokens) ?? num(raw.cached_tokens) ?? num(raw.prompt_cache_hit_tokens);
  return {
    type: "usage",
    usage: {
      promptTokens: prompt,
      completionTokens: completion,
      totalTokens: num(raw.total_tokens) ?? prompt + completion,
      ...(cached !== undefined ? { cacheReadTokens: cached } : {}),
    },
  };
}

function isJson(s: string): boolean {
  if (s.trim() === "") return true;
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}
