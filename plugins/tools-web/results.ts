import { T } from "../../core/index.js";

/** Cuts `text` to `max` characters and says so, so the model knows the page goes on. */
export function capText(text: string, max: number, hint: string): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  return {
    text: `${text.slice(0, max)}\n\n[Truncated: showing the first ${max} of ${text.length} characters. ${hint}]`,
    truncated: true,
  };
}

/** A signal that fires on the caller's abort or after `timeoutMs`, with a way to tell the two apart afterwards. */
export function withTimeout(outer: AbortSignal, timeoutMs: number): { signal: AbortSignal; timedOut(): boolean } {
  const timeout = AbortSignal.timeout(timeoutMs);
  return { signal: AbortSignal.any([outer, timeout]), timedOut: () => timeout.aborted && !outer.aborted };
}

/** A string enum as plain JSON Schema `enum` (models handle it better than TypeBox's `anyOf` of literals). */
export function stringEnum<const V extends readonly string[]>(values: V, options: { description?: string } = {}) {
  return T.Unsafe<V[number]>({ type: "string", enum: [...values], ...options });
}
