import {
  type Disposable,
  type DocumentStore,
  type Logger,
  type ProjectTrust,
  scanProjectPlugins,
  type TrustRecord,
  toDisposable,
} from "../../core/index.js";

const NAME = "trust.json";

interface TrustDocument {
  version: 1;
  projects: Record<string, { trusted: boolean; decidedAt: string; plugins?: Record<string, string> }>;
}

/**
 * Trust decisions per project root: the document `trust.json` (a 0600 file in the home, or the database several
 * daemons share, where one daemon's decision holds for all). A project without a decision is untrusted.
 */
export class TrustStore implements ProjectTrust {
  private records = new Map<string, TrustRecord>();
  private readonly listeners = new Set<(root: string) => void | Promise<void>>();
  private applying: Promise<unknown> = Promise.resolve();
  private unwatch: Disposable | undefined;

  constructor(
    private readonly documents: () => DocumentStore,
    private readonly rootOf: (cwd: string) => string,
    private readonly log: Logger,
  ) {}

  /** Reads the decisions (at start), and again whenever another daemon changes them. */
  async load(): Promise<void> {
    const docs = this.documents();
    this.records = this.parse(await docs.read(NAME), docs.where);
    this.unwatch ??= docs.watch?.((name) => {
      if (name !== undefined && name !== NAME) return;
      docs
        .read(NAME)
        .then((text) => this.replace(this.parse(text, docs.where)))
        .catch((err) => this.log.warn({ err }, "could not read the trust decisions again"));
    });
  }

  close(): void {
    this.unwatch?.dispose();
  }

  private parse(text: string | undefined, where: string): Map<string, TrustRecord> {
    const records = new Map<string, TrustRecord>();
    if (text === undefined) return records; // no decisions yet
    try {
      const data = JSON.parse(text) as Partial<TrustDocument>;
      for (const [path, r] of Object.entries(data.projects ?? {})) {
        if (typeof r?.trusted !== "boolean") continue;
        const rec: TrustRecord = { path, trusted: r.trusted, decidedAt: String(r.decidedAt ?? "") };
        if (r.trusted && r.plugins && typeof r.plugins === "object") rec.plugins = pinsOf(r.plugins);
        records.set(path, rec);
      }
    } catch (err) {
      // Untrusted is the safe default: a damaged document only means projects are asked again.
      this.log.warn({ err, where }, "the trust decisions are not valid JSON; starting with none");
    }
    return records;
  }

  /** Uses `next`, and tells the listeners of every root whose decision changed. */
  private replace(next: Map<string, TrustRecord>): void {
    const changed = new Set<string>();
    for (const [path, rec] of next) {
      const before = this.records.get(path);
      if (!before || before.trusted !== rec.trusted || before.decidedAt !== rec.decidedAt) changed.add(path);
    }
    for (const path of this.records.keys()) if (!next.has(path)) changed.add(path);
    this.records = next;
    const pending: Promise<unknown>[] = [];
    for (const path of changed) {
      for (const fn of this.listeners) {
        try {
          const r = fn(path);
          if (r) pending.push(r.catch((err) => this.log.error({ err }, "trust change listener failed")));
        } catch (err) {
          this.log.error({ err }, "trust change listener failed");
        }
      }
    }
    this.applying = Promise.all(pending);
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

  async set(cwd: string, trusted: boolean): Promise<TrustRecord> {
    const path = this.rootOf(cwd);
    const rec: TrustRecord = { path, trusted, decidedAt: new Date().toISOString() };
    if (trusted) rec.plugins = Object.fromEntries(scanProjectPlugins(path).map((p) => [p.name, p.hash]));
    const docs = this.documents();
    const text = await docs.update(NAME, (current) => {
      const records = this.parse(current, docs.where);
      records.set(path, rec);
      const data: TrustDocument = { version: 1, projects: {} };
      for (const r of [...records.values()].sort((a, b) => a.path.localeCompare(b.path))) {
        data.projects[r.path] = {
          trusted: r.trusted,
          decidedAt: r.decidedAt,
          ...(r.plugins ? { plugins: r.plugins } : {}),
        };
      }
      return `${JSON.stringify(data, null, 2)}\n`;
    });
    this.replace(this.parse(text, docs.where));
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
