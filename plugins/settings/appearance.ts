import type { Disposable, DocumentStore, Logger } from "../../core/index.js";

export interface Appearance {
  showReasoning: boolean;
}

export const DEFAULT_APPEARANCE: Appearance = { showReasoning: true };

/** The document's name: a file under the plugin's data directory, or a row of a team's database. */
const NAME = "plugins-data/settings/appearance.json";

/**
 * Client appearance settings: one small document (a 0600 file in the home, written then renamed, or the database
 * several daemons share, read again when another daemon changes it). An unreadable document means the defaults.
 */
export class AppearanceStore {
  private value: Appearance = { ...DEFAULT_APPEARANCE };
  private unwatch: Disposable | undefined;

  constructor(
    private readonly documents: () => DocumentStore,
    private readonly log: Logger,
  ) {}

  /** Reads the settings (at start), and again whenever another daemon changes them. */
  async load(): Promise<void> {
    const docs = this.documents();
    const read = async () => {
      this.value = this.parse(await docs.read(NAME).catch((err: unknown) => this.unreadable(err)));
    };
    await read();
    this.unwatch ??= docs.watch?.((name) => {
      if (name === undefined || name === NAME) void read();
    });
  }

  close(): void {
    this.unwatch?.dispose();
  }

  get(): Appearance {
    return { ...this.value };
  }

  async set(next: Appearance): Promise<Appearance> {
    const value: Appearance = { showReasoning: next.showReasoning };
    await this.documents().update(NAME, () => `${JSON.stringify(value, null, 2)}\n`);
    this.value = value;
    return { ...value };
  }

  private unreadable(err: unknown): undefined {
    this.log.warn({ err: String(err) }, "ignoring unreadable appearance settings");
    return undefined;
  }

  private parse(text: string | undefined): Appearance {
    if (text === undefined) return { ...DEFAULT_APPEARANCE };
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      this.unreadable(err);
      return { ...DEFAULT_APPEARANCE };
    }
    const showReasoning = (raw as { showReasoning?: unknown } | null)?.showReasoning;
    return { showReasoning: typeof showReasoning === "boolean" ? showReasoning : DEFAULT_APPEARANCE.showReasoning };
  }
}
