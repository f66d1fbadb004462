import type { Step, StreamTurn } from "../../testing/fake-provider.js";
import type { SseClient, SseFrame } from "../../testing/sse.js";
import { now } from "./clock.js";

/**
 * A scripted answer of `n` one-token chunks whose content is `t<i> `, so every client can tell which chunk it got.
 * The fake provider reads a chunk's `content` right before writing it to the socket, so a getter there stamps the
 * moment the chunk leaves the provider: the common reference for the direct and the daemon path.
 * Pacing uses `delayMs` steps rather than `chunkDelayMs`, which would sleep between the stamp and the write.
 */
export interface StampedTurn {
  turn: StreamTurn;
  /** sent[i]: when chunk i was handed to the provider's socket (clock.now()). */
  sent: Float64Array;
}

export function stampedTurn(n: number, gapMs: number): StampedTurn {
  const sent = new Float64Array(n).fill(Number.NaN);
  const steps: Step[] = [];
  for (let i = 0; i < n; i++) {
    if (gapMs > 0 && i > 0) steps.push({ delayMs: gapMs });
    const content = `t${i} `;
    steps.push({
      get content() {
        sent[i] = now();
        return content;
      },
    });
  }
  steps.push({ usage: { prompt_tokens: 10, completion_tokens: n } });
  return { turn: { steps }, sent };
}

/** Chunk indices carried by a token text (several when the daemon coalesced deltas). */
export function tokenIndices(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/t(\d+) /g)) out.push(Number(m[1]));
  return out;
}

/** What one reader saw of an n-token stream. */
export interface Reception {
  /** got[i]: when chunk i arrived (NaN if never). */
  got: Float64Array;
  /** Chunks received more than once (should be 0). */
  duplicates: number;
  /** Time of the first token. */
  first: number;
}

export function newReception(n: number): Reception {
  return { got: new Float64Array(n).fill(Number.NaN), duplicates: 0, first: Number.NaN };
}

export function receive(r: Reception, text: string, t: number): void {
  for (const i of tokenIndices(text)) {
    if (i >= r.got.length) continue;
    if (Number.isNaN(r.got[i] as number)) r.got[i] = t;
    else r.duplicates++;
    if (Number.isNaN(r.first)) r.first = t;
  }
}

export function missing(r: Reception): number {
  let k = 0;
  for (const t of r.got) if (Number.isNaN(t)) k++;
  return k;
}

/**
 * Stamps `token` frames of a session stream as the SseClient parses them (its waiter predicates run synchronously
 * per frame), until the turn's `end` frame. `trim` drops parsed frames so 200 clients do not hold 400k objects.
 */
export function recordTurn(
  c: SseClient,
  r: Reception,
  opts: { trim?: boolean; timeoutMs?: number } = {},
): Promise<SseFrame> {
  c.frames.length = 0;
  return c.waitFor(
    (f) => {
      const t = now();
      if (f.json?.type === "token") receive(r, String(f.json.text ?? ""), t);
      if (opts.trim) c.frames.length = 0;
      return f.json?.type === "end";
    },
    opts.timeoutMs ?? 120_000,
    0,
  );
}

/** A direct streaming chat request to the fake provider through fetch, like any plain HTTP client. */
export async function readDirect(
  baseUrl: string,
  body: unknown,
  r: Reception,
): Promise<{ start: number; headers: number; end: number }> {
  const start = now();
  const res = await fetch(`${baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer bench-key" },
    body: JSON.stringify(body),
  });
  const headers = now();
  if (!res.ok || !res.body) throw new Error(`fake provider answered ${res.status}`);
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    let idx = buf.indexOf("\n\n");
    while (idx >= 0) {
      const block = buf.slice(0, idx);
      buf = buf.slice(idx + 2);
      idx = buf.indexOf("\n\n");
      if (!block.startsWith("data: ") || block === "data: [DONE]") continue;
      const json = JSON.parse(block.slice(6)) as { choices?: Array<{ delta?: { content?: string } }> };
      const text = json.choices?.[0]?.delta?.content;
      if (text) receive(r, text, now());
    }
  }
  return { start, headers, end: now() };
}

/** Latencies (ms) of each received chunk after it left the provider. */
export function latencies(sent: Float64Array, r: Reception): number[] {
  const out: number[] = [];
  for (let i = 0; i < sent.length; i++) {
    const s = sent[i] as number;
    const g = r.got[i] as number;
    if (!Number.isNaN(s) && !Number.isNaN(g)) out.push(g - s);
  }
  return out;
}

/** End-to-end tokens per second: from the provider writing the first chunk to the reader getting the last. */
export function throughput(sent: Float64Array, r: Reception): number {
  let last = Number.NEGATIVE_INFINITY;
  let n = 0;
  for (const t of r.got) {
    if (Number.isNaN(t)) continue;
    n++;
    if (t > last) last = t;
  }
  const first = sent[0] as number;
  return n > 0 && Number.isFinite(first) ? (n * 1000) / (last - first) : Number.NaN;
}
