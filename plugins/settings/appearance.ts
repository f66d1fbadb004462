import { readFileSync } from "node:fs";
import { type Logger, writePrivateFile } from "../../core/index.js";

export interface Appearance {
  showReasoning: boolean;
}

export const DEFAULT_APPEARANCE: Appearance = { showReasoning: true };

/**
 * Client appearance settings in one small JSON file in the daemon home. Read once, written on every change
 * (write-then-rename, so a crash never leaves a half-written file). An unreadable file means the defaults.
 */
export class AppearanceStore {
  private value: Appearance | undefined;

  constructor(
    private readonly file: () => string,
    private readonly log: Logger,
  ) {}

  get(): Appearance {
    this.value ??= this.load();
    return { ...this.value };
  }

  set(next: Appearance): Appearance {
    const value: Appearance = { showReasoning: next.showReasoning };
    const file = this.file();
    writePrivateFile(file, `${JSON.stringify(value, null, 2)}\n`);
    this.value = value;
    return { ...value };
  }

  private load(): Appearance {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(this.file(), "utf8"));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") {
        this.log.warn({ err: String(err) }, "ignoring an unreadable appearance settings file");
      }
      return { ...DEFAULT_APPEARANCE };
    }
    const showReasoning = (raw as { showReasoning?: unknown } | null)?.showReasoning;
    return { showReasoning: typeof showReasoning === "boolean" ? showReasoning : DEFAULT_APPEARANCE.showReasoning };
  }
}
