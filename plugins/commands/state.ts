import { readFileSync } from "node:fs";
import { errorMessage, type Logger, type Provider, writePrivateFile } from "../../core/index.js";

/** Daemon-wide command preferences (the /theme choice), in a small JSON file of the plugin. */
export class Prefs {
  private data: Record<string, unknown> | undefined;

  constructor(
    private readonly file: () => string,
    private readonly log: Logger,
  ) {}

  get(key: string): unknown {
    return this.load()[key];
  }

  set(key: string, value: unknown): void {
    const data = { ...this.load(), [key]: value };
    this.data = data;
    try {
      writePrivateFile(this.file(), `${JSON.stringify(data, null, 2)}\n`);
    } catch (err) {
      this.log.warn({ err: errorMessage(err) }, "could not save command preferences");
    }
  }

  private load(): Record<string, unknown> {
    if (!this.data) {
      try {
        const parsed = JSON.parse(readFileSync(this.file(), "utf8")) as unknown;
        this.data =
          parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
      } catch {
        this.data = {};
      }
    }
    return this.data;
  }
}

const LIST_TIMEOUT_MS = 5000;
const REFRESH_EVERY_MS = 60_000;

/** Model ids last listed by the provider, for /model and the composer's completions. */
export class ModelMemory {
  private ids: string[] = [];
  private lastTry = 0;
  private running: Promise<string[]> | undefined;

  constructor(private readonly provider: () => Provider | undefined) {}

  known(): string[] {
    return this.ids;
  }

  /** A live list (bounded wait); falls back to the last known list when the provider cannot answer. */
  async refresh(): Promise<{ ids: string[]; error?: string }> {
    try {
      if (!this.running) {
        this.running = this.fetch().finally(() => {
          this.running = undefined;
        });
      }
      return { ids: await this.running };
    } catch (err) {
      return { ids: this.ids, error: errorMessage(err) };
    }
  }

  /** Starts a background refresh when the list is empty or stale (never waits, never throws). */
  warm(): void {
    if (this.running || Date.now() - this.lastTry < REFRESH_EVERY_MS) return;
    void this.refresh();
  }

  private async fetch(): Promise<string[]> {
    this.lastTry = Date.now();
    const p = this.provider();
    if (!p) throw new Error("no model provider is configured");
    const models = await p.listModels(AbortSignal.timeout(LIST_TIMEOUT_MS));
    this.ids = [...new Set(models.map((m) => m.id))].sort();
    return this.ids;
  }
}
