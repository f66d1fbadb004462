/**
 * Keeps the first and the last part of a stream within `max` characters and counts what fell in between, so a
 * command that prints megabytes costs bounded memory and the model still sees how it started and how it ended.
 */
export class HeadTailBuffer {
  private head = "";
  private tail = "";
  private total = 0;
  private readonly headCap: number;
  private readonly tailCap: number;

  constructor(private readonly max: number) {
    this.headCap = Math.floor(max / 2);
    this.tailCap = max - this.headCap;
  }

  get length(): number {
    return this.total;
  }

  append(text: string): void {
    this.total += text.length;
    const room = this.headCap - this.head.length;
    if (room > 0) {
      this.head += text.slice(0, room);
      text = text.slice(room);
    }
    if (!text) return;
    this.tail += text;
    if (this.tail.length > this.tailCap * 2) this.tail = this.tail.slice(-this.tailCap);
  }

  /** The kept text, with a note saying how much was left out when the stream exceeded the cap. */
  render(): { text: string; omitted: number } {
    if (this.total <= this.max) return { text: this.head + this.tail, omitted: 0 };
    const tail = this.tail.slice(-this.tailCap);
    const omitted = this.total - this.head.length - tail.length;
    const note = `[... ${omitted} characters omitted (${this.total} in total); showing the first ${this.head.length} and the last ${tail.length} ...]`;
    return { text: `${this.head}\n\n${note}\n\n${tail}`, omitted };
  }
}

/** Caps `text` the same way in one go. */
export function capOutput(text: string, max: number): { text: string; omitted: number } {
  const b = new HeadTailBuffer(max);
  b.append(text);
  return b.render();
}

/**
 * Output a background task produced that nobody has read yet, bounded: past `max` characters the oldest unread
 * output is dropped (and counted), so a chatty server cannot grow the daemon's memory.
 */
export class UnreadQueue {
  private chunks: string[] = [];
  private size = 0;
  private dropped = 0;

  constructor(private readonly max: number) {}

  get pending(): number {
    return this.size;
  }

  push(text: string): void {
    if (!text) return;
    this.chunks.push(text);
    this.size += text.length;
    while (this.size > this.max) {
      const first = this.chunks[0];
      const excess = this.size - this.max;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
        this.dropped += first.length;
      } else {
        this.chunks[0] = first.slice(excess);
        this.size -= excess;
        this.dropped += excess;
      }
    }
  }

  /** Everything unread, and how many unread characters were dropped since the last take. */
  take(): { text: string; dropped: number } {
    const out = { text: this.chunks.join(""), dropped: this.dropped };
    this.chunks = [];
    this.size = 0;
    this.dropped = 0;
    return out;
  }
}
