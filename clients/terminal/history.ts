/** The composer's input history, persisted per home (`<home>/terminal-history.jsonl`, newest last, bounded). */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const MAX = 500;

export class InputHistory {
  private entries: string[];
  private readonly file: string;

  constructor(home: string) {
    this.file = join(home, "terminal-history.jsonl");
    this.entries = [];
    try {
      for (const line of readFileSync(this.file, "utf8").split("\n")) {
        if (!line) continue;
        try {
          const v = JSON.parse(line) as unknown;
          if (typeof v === "string") this.entries.push(v);
        } catch {
          // a damaged line is skipped
        }
      }
    } catch {
      // no history yet
    }
    this.entries = this.entries.slice(-MAX);
  }

  get list(): readonly string[] {
    return this.entries;
  }

  add(text: string): void {
    if (!text.trim() || this.entries.at(-1) === text) return;
    this.entries.push(text);
    try {
      mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
      if (this.entries.length > MAX * 2) {
        this.entries = this.entries.slice(-MAX);
        writeFileSync(this.file, `${this.entries.map((e) => JSON.stringify(e)).join("\n")}\n`, { mode: 0o600 });
      } else {
        appendFileSync(this.file, `${JSON.stringify(text)}\n`, { mode: 0o600 });
      }
    } catch {
      // history is a convenience; a read-only home does not stop the client
    }
  }
}
