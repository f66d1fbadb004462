import type { StoredMessage } from "../../core/index.js";

/** The in-context rows of the most recently used sessions are kept in memory (bounded by count and size). */
const CONTEXT_CACHE_SESSIONS = 16;
const CONTEXT_CACHE_CHARS = 32 * 1024 * 1024;

interface CachedContext {
  rows: StoredMessage[];
  /** Approximate size: the characters of the stored JSON columns. */
  chars: number;
}

/**
 * Per session, what `contextMessages` returns; least recently used first. The daemon is the database's only writer,
 * so the rows are kept up to date by appends, and anything else that changes the working set drops them.
 */
export class ContextCache {
  private readonly bySession = new Map<string, CachedContext>();
  private chars = 0;

  /** A fresh array of the cached rows (now the most recently used), or undefined when not cached. */
  get(sessionId: string): StoredMessage[] | undefined {
    const cached = this.bySession.get(sessionId);
    if (!cached) return undefined;
    this.bySession.delete(sessionId);
    this.bySession.set(sessionId, cached);
    return cached.rows.slice();
  }

  /** Keeps `rows` (of `chars`, see messageChars) unless too large; returns what the caller hands out. */
  keep(sessionId: string, rows: StoredMessage[], chars: number): StoredMessage[] {
    if (chars > CONTEXT_CACHE_CHARS / 4) return rows;
    this.bySession.set(sessionId, { rows, chars });
    this.chars += chars;
    this.evict();
    return rows.slice();
  }

  /** A message just appended: added to the session's rows when they are cached and it is in context. */
  appended(sessionId: string, stored: StoredMessage): void {
    const cached = this.bySession.get(sessionId);
    if (!cached || !stored.inContext) return;
    // A copy of its own: the caller may keep and change the object it got back.
    const copy = structuredClone(stored);
    cached.rows.push(copy);
    const chars = messageChars(copy);
    cached.chars += chars;
    this.chars += chars;
    this.evict();
  }

  drop(sessionId: string): void {
    const cached = this.bySession.get(sessionId);
    if (!cached) return;
    this.bySession.delete(sessionId);
    this.chars -= cached.chars;
  }

  clear(): void {
    this.bySession.clear();
    this.chars = 0;
  }

  private evict(): void {
    for (const [id, c] of this.bySession) {
      if (this.bySession.size <= CONTEXT_CACHE_SESSIONS && this.chars <= CONTEXT_CACHE_CHARS) return;
      this.bySession.delete(id);
      this.chars -= c.chars;
    }
  }
}

/** A message's approximate size in the cache. */
export function messageChars(m: StoredMessage): number {
  let n = 64 + (typeof m.content === "string" ? m.content.length : JSON.stringify(m.content ?? null).length);
  if (m.toolCalls) for (const c of m.toolCalls) n += c.arguments.length + 64;
  if (m.thinking) n += m.thinking.length;
  return n;
}
