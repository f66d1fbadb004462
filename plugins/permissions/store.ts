import { randomBytes } from "node:crypto";
import type { Disposable, DocumentStore, PermissionRule } from "../../core/index.js";

const NAME = "permissions.json";

interface RulesDocument {
  version: 1;
  rules: PermissionRule[];
}

/**
 * The rules the user saved: the document `permissions.json` (a 0600 file in the home, or the database several
 * daemons share). Each change is applied to the document as it is then (another daemon's changes are kept) and to
 * the in-memory list only once it is stored, so a failed write changes nothing. Another daemon's change is read
 * again when the store says so.
 */
export class SavedRules {
  private rules: PermissionRule[] = [];
  private unwatch: Disposable | undefined;

  constructor(private readonly store: () => DocumentStore) {}

  private get documents(): DocumentStore {
    return this.store();
  }

  /** Reads the rules (at start); a damaged document stops the plugin with its reason. */
  async load(): Promise<void> {
    this.rules = parse(await this.documents.read(NAME), this.documents.where);
    this.unwatch ??= this.documents.watch?.((name) => {
      if (name !== undefined && name !== NAME) return;
      this.documents
        .read(NAME)
        .then((text) => {
          this.rules = parse(text, this.documents.where);
        })
        .catch(() => {}); // a damaged change keeps the rules in use
    });
  }

  close(): void {
    this.unwatch?.dispose();
  }

  list(): readonly PermissionRule[] {
    return this.rules;
  }

  add(rule: Omit<PermissionRule, "id" | "createdAt" | "source">): Promise<PermissionRule> {
    const full: PermissionRule = {
      id: `r_${randomBytes(9).toString("base64url")}`,
      ...rule,
      source: "user",
      createdAt: new Date().toISOString(),
    };
    return this.change((rules) => [...rules, full]).then(() => full);
  }

  /** Removes the rules `drop` selects; resolves with how many went. */
  async remove(drop: (r: PermissionRule) => boolean): Promise<number> {
    let removed = 0;
    await this.change((rules) => {
      const kept = rules.filter((r) => !drop(r));
      removed = rules.length - kept.length;
      return kept.length === rules.length ? rules : kept;
    });
    return removed;
  }

  private async change(edit: (rules: PermissionRule[]) => PermissionRule[]): Promise<void> {
    const where = this.documents.where;
    const text = await this.documents.update(NAME, (current) => {
      const rules = parse(current, where);
      const next = edit(rules);
      if (next === rules) return undefined;
      const body: RulesDocument = { version: 1, rules: next };
      return `${JSON.stringify(body, null, 2)}\n`;
    });
    this.rules = parse(text, where);
  }
}

function parse(text: string | undefined, where: string): PermissionRule[] {
  if (text === undefined) return [];
  try {
    const parsed = JSON.parse(text) as Partial<RulesDocument>;
    if (!Array.isArray(parsed.rules)) throw new Error("no rules list");
    return parsed.rules.filter((r) => r && typeof r.pattern === "string" && typeof r.id === "string");
  } catch (err) {
    throw new Error(`${NAME} in ${where} is not a valid rules document (${(err as Error).message}); fix or remove it`);
  }
}
