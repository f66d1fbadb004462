/**
 * Splits reasoning out of streamed `content` where servers leave it inline: `<think>…</think>` blocks (DeepSeek-R1
 * and Qwen served without a reasoning parser, MiniMax) and gpt-oss harmony channels
 * (`<|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>final<|message|>…`, llama.cpp without a
 * reasoning format). Works while streaming: a tag split across chunks is held back until it is complete (or proves to
 * be plain text), so nothing reaches the user twice or in the wrong place.
 *
 * `<think>` counts only before any answer text (a model writing about the tag later is not reasoning); the harmony
 * control tokens are never text, so they count anywhere. Whitespace right after a block is dropped.
 */

export type InlineSink = (kind: "content" | "reasoning", text: string) => void;

const THINK_OPEN = "<think>";
const THINK_CLOSE = "</think>";
const HARMONY = ["<|channel|>", "<|message|>", "<|start|>", "<|end|>", "<|return|>", "<|call|>", "<|constrain|>"];

type Mode = "answer" | "think" | "header" | "analysis";

export class InlineReasoning {
  private mode: Mode = "answer";
  /** The end of the last piece when it may be the start of a tag. */
  private held = "";
  /** Harmony header text since `<|start|>` / `<|channel|>` (role, channel name, recipient). */
  private header = "";
  /** Answer text has been emitted: `<think>` is plain text from now on. */
  private started = false;
  /** Leading whitespace of the answer, held until text follows (dropped when a tag follows). */
  private leadWs = "";
  /** Whitespace at the start of the current block (after a tag) is dropped. */
  private trimNext = false;

  constructor(private readonly sink: InlineSink) {}

  push(text: string): void {
    // The common case: answer text without anything tag-like.
    if (this.held === "" && this.mode === "answer" && this.started && text.indexOf("<") < 0) {
      this.sink("content", text);
      return;
    }
    const s = this.held + text;
    this.held = "";
    let i = 0;
    while (i < s.length) {
      const lt = s.indexOf("<", i);
      if (lt < 0) {
        this.out(i === 0 ? s : s.slice(i));
        return;
      }
      if (lt > i) this.out(s.slice(i, lt));
      const tag = this.tagAt(s, lt);
      if (tag === undefined) {
        this.out("<");
        i = lt + 1;
      } else if (tag === "") {
        this.held = s.slice(lt);
        return;
      } else {
        this.onTag(tag);
        i = lt + tag.length;
      }
    }
  }

  /** The stream ended: a held partial tag was text after all. */
  end(): void {
    const rest = this.held;
    this.held = "";
    if (rest) this.out(rest);
  }

  /** The tag starting at `at`; "" when `s` ends with a prefix of one (wait for more); undefined: plain text. */
  private tagAt(s: string, at: number): string | undefined {
    let partial = false;
    const check = (tag: string): boolean => {
      if (s.startsWith(tag, at)) return true;
      if (s.length - at < tag.length && tag.startsWith(s.slice(at))) partial = true;
      return false;
    };
    if (s.charCodeAt(at + 1) === 124 /* | */ || at + 1 === s.length) {
      for (const tag of HARMONY) if (check(tag)) return tag;
    }
    if (!this.started && (this.mode === "answer" || this.mode === "think")) {
      if (this.mode === "answer" && check(THINK_OPEN)) return THINK_OPEN;
      if (check(THINK_CLOSE)) return THINK_CLOSE;
    } else if (this.mode === "think" && check(THINK_CLOSE)) return THINK_CLOSE;
    return partial ? "" : undefined;
  }

  private onTag(tag: string): void {
    this.leadWs = "";
    this.trimNext = true;
    switch (tag) {
      case THINK_OPEN:
        this.mode = "think";
        return;
      case "<|start|>":
      case "<|channel|>":
        this.mode = "header";
        this.header = "";
        return;
      case "<|constrain|>":
        this.header += " ";
        return;
      case "<|message|>":
        this.mode = (this.header.trim().split(/\s/)[0] ?? "") === "analysis" ? "analysis" : "answer";
        return;
      default:
        // </think>, <|end|>, <|return|>, <|call|>: back to the answer.
        this.mode = "answer";
    }
  }

  private out(text: string): void {
    if (this.mode === "header") {
      this.header += text;
      return;
    }
    let t = text;
    if (this.trimNext) {
      t = t.trimStart();
      if (t === "") return;
      this.trimNext = false;
    }
    if (this.mode === "answer") {
      if (!this.started) {
        if (t.trim() === "") {
          this.leadWs += t;
          return;
        }
        this.started = true;
        if (this.leadWs) t = this.leadWs + t;
        this.leadWs = "";
      }
      this.sink("content", t);
    } else this.sink("reasoning", t);
  }
}
