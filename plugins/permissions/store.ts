import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type PermissionRule, writePrivateFileAsync } from "../../core/index.js";

interface RulesFile {
  version: 1;
  rules: PermissionRule[];
}

/**
 * The rules the user saved, in `<home>/permissions.json` (0600, replaced atomically). Writes are serialised: each
 * change is applied to the in-memory list only once it is on disk, so a failed write changes nothing.
 */
export class RuleFile {
  private rules: PermissionRule[];
  private chain: Promise<unknown> = Promise.resolve();
  readonly file: string;

  constructor(home: string) {
    this.file = join(home, "permissions.json");
    this.rules = load(this.file);
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
  remove(drop: (r: PermissionRule) => boolean): Promise<number> {
    let removed = 0;
    return this.change((rules) => {
      const kept = rules.filter((r) => !drop(r));
      removed = rules.length - kept.length;
      return kept;
    }).then(() => removed);
  }

  private change(edit: (rules: PermissionRule[]) => PermissionRule[]): Promise<void> {
    const run = this.chain.then(async () => {
      const next = edit(this.rules);
      if (next === this.rules || (next.length === this.rules.length && next.every((r, i) => r === this.rules[i])))
        return;
      const body: RulesFile = { version: 1, rules: next };
      await writePrivateFileAsync(this.file, `${JSON.stringify(body, null, 2)}\n`);
      this.rules = next;
    });
    this.chain = run.catch(() => {});
    return run;
  }
}

function load(file: string): PermissionRule[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as Partial<RulesFile>;
    if (!Array.isArray(parsed.rules)) throw new Error("no rules list");
    return parsed.rules.filter((r) => r && typeof r.pattern === "string" && typeof r.id === "string");
  } catch (err) {
    throw new Error(`${file} is not a valid rules file (${(err as Error).message}); fix or remove it`);
  }
}
