import { readFile } from "node:fs/promises";
import { type Logger, type ModelInfo, writePrivateFile } from "../../core/index.js";

interface CacheFile {
  fetchedAt: string;
  models: ModelInfo[];
}

/**
 * The last successful model list, in memory and in a JSON file so clients can show a model picker at once after a
 * restart without calling the provider. A missing or unreadable file is an empty cache, never an error.
 */
export class ModelCache {
  private models: ModelInfo[] | undefined;
  private loading: Promise<ModelInfo[]> | undefined;

  constructor(
    private readonly file: () => string,
    private readonly log?: Logger,
  ) {}

  async get(): Promise<ModelInfo[]> {
    if (this.models) return this.models;
    this.loading ??= this.load();
    return this.loading;
  }

  async set(models: ModelInfo[]): Promise<void> {
    this.models = models;
    const file = this.file();
    const body: CacheFile = { fetchedAt: new Date().toISOString(), models };
    try {
      // Atomic (write-then-rename): a crash mid-write never leaves a truncated cache behind.
      writePrivateFile(file, `${JSON.stringify(body, null, 2)}\n`);
    } catch (err) {
      this.log?.warn({ err: String(err) }, "could not persist the model cache");
    }
  }

  private async load(): Promise<ModelInfo[]> {
    try {
      const parsed = JSON.parse(await readFile(this.file(), "utf8")) as Partial<CacheFile>;
      const models = Array.isArray(parsed.models)
        ? parsed.models.filter((m): m is ModelInfo => typeof m?.id === "string")
        : [];
      // A list fetched while this load ran is newer than the file.
      this.models ??= models;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") {
        this.log?.warn({ err: String(err) }, "ignoring an unreadable model cache");
      }
      this.models ??= [];
    }
    return this.models;
  }
}
