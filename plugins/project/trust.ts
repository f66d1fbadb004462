import { readFileSync } from "node:fs";
import {
  type Disposable,
  type Logger,
  type ProjectTrust,
  scanProjectPlugins,
  type TrustRecord,
  toDisposable,
  writePrivateFile,
} from "../../core/index.js";

interface TrustFile {
  version: 1;
  projects: Record<string, { trusted: boolean; decidedAt: string; plugins?: Record<string, string> }>;
}

/** Trust decisions per project root, persisted in `<home>/trust.json`. A project without a decision is untrusted. */
export class TrustStore implements ProjectTrust {
  private readonly records = new Map<string, TrustRecord>();
  private readonly listeners = new Set<(root: string) => void | Promise<void>>();
  private applying: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly rootOf: (cwd: string) => string,
    private readonly log: Logger,
  ) {
    this.load();
  }

  private load(): void {
    let text: string;
    try {
      text = readFileSync(this.file, "utf8");
    } catch {
      return; // no decisions yet
    }
    try {
      const data = JSON.parse(text) as Partial<TrustFile>;
      for (const [path, r] of Object.entries(data.projects ?? {})) {
        if (typeof r?.trusted !== "boolean") continue;
        const rec: TrustRecord = { path, trusted: r.trusted, decidedAt: String(r.decidedAt ?? "") };
        if (r.trusted && r.plugins && typeof r.plugins === "object") rec.plugins = pinsOf(r.plugins);
        this.records.set(path, rec);
      }
    } catch (err) {
      // Untrusted is the safe default: a damaged file only means projects are asked again.
      this.log.warn({ err, file: this.file }, "trust file is not valid JSON; starting with no trust decisions");
    }
  }

  private save(): void {
    const data: TrustFile = { version: 1, projects: {} };
    for (const r of this.list()) {
      data.projects[r.path] = {
        trusted: r.trusted,
        decidedAt: r.decidedAt,
        ...(r.plugins ? { plugins: r.plugins } : {}),
      };
    }
    writePrivateFile(this.file, `${JSON.stringify(data, null, 2)}\n`);
  }

  projectRoot(cwd: string): string {
    return this.rootOf(cwd);
  }

  decision(cwd: string): TrustRecord | undefined {
    return this.records.get(this.rootOf(cwd));
  }

  isTrusted(cwd: string): boolean {
    return this.decision(cwd)?.trusted === true;
  }

  list(): TrustRecord[] {
    return [...this.records.values()].sort((a, b) => a.path.localeCompare(b.path));
  }

  set(cwd: string, trusted: boolean): TrustRecord {
    const path = this.rootOf(cwd);
    const rec: TrustRecord = { path, trusted, decidedAt: new Date().toISOString() };
    if (trusted) rec.plugins = Object.fromEntries(scanProjectPlugins(path).map((p) => [p.name, p.hash]));
    const before = this.records.get(path);
    this.records.set(path, rec);
    try {
      this.save();
    } catch (err) {
      if (before) this.records.set(path, before);
      else this.records.delete(path);
      throw err;
    }
    const pending: Promise<unknown>[] = [];
    for (const fn of this.listeners) {
      try {
        const r = fn(path);
        if (r) pending.push(r.catch((err) => this.log.error({ err }, "trust change listener failed")));
      } catch (err) {
        this.log.error({ err }, "trust change listener failed");
      }
    }
    this.applying = Promise.all(pending);
    return rec;
  }

  /** Settles when the listeners of the last decision are done (project plugins loaded or unloaded). */
  applied(): Promise<unknown> {
    return this.applying;
  }

  pins(cwd: string): Record<string, string> | undefined {
    const rec = this.decision(cwd);
    return rec?.trusted ? (rec.plugins ?? {}) : undefined;
  }

  onChange(fn: (root: string) => void | Promise<void>): Disposable {
    this.listeners.add(fn);
    return toDisposable(() => this.listeners.delete(fn));
  }
}

function pinsOf(value: object): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) if (typeof v === "string") out[k] = v;
  return out;
}
