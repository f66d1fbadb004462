import type { PermissionRule, PermissionRules, Sandbox, SandboxStatus } from "../../core/index.js";
import { display } from "./argv.js";
import { classifyCommand } from "./classifier.js";
import { type CommandPart, commandParts } from "./commands.js";
import { needsNetwork } from "./network.js";

/** Why a command is asked about. */
export type AskReason = "dangerous" | "network" | "not sandboxed" | "rule";

export type Approval =
  | { kind: "deny"; rule: PermissionRule; part: string }
  | { kind: "run"; network: boolean }
  | { kind: "ask"; reasons: AskReason[]; text: string; suggestedRule?: string; network: boolean };

export interface ApprovalInput {
  command: string;
  /** The model said the command needs the network (`network: true`). */
  wantsNetwork: boolean;
  cwd: string;
  sessionId: string;
  permissionMode: "default" | "bypass";
  rules: PermissionRules | undefined;
  sandbox: Sandbox | undefined;
  status: SandboxStatus | undefined;
}

/** Programs whose first non-option words name what they do (`npm run test`, `git push`, `docker compose up`). */
const SUBCOMMAND_DEPTH: Record<string, number> = {
  npm: 2,
  pnpm: 2,
  yarn: 2,
  bun: 2,
  git: 1,
  cargo: 1,
  go: 1,
  docker: 2,
  kubectl: 2,
  pip: 1,
  pip3: 1,
  uv: 1,
  poetry: 1,
  make: 1,
  gh: 2,
  deno: 1,
  dotnet: 1,
  mvn: 1,
  gradle: 1,
  apt: 1,
  "apt-get": 1,
  brew: 1,
  systemctl: 1,
};

function quote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The rule offered when the user answers: the exact command when it is dangerous on its own (`rm -rf ./build`),
 * else its program and subcommand followed by `*` (`npm run test *`, `git push *`).
 */
export function suggestRule(part: CommandPart, dangerous: boolean): string {
  const words = part.strict;
  if (dangerous) return words.map(quote).join(" ");
  const programAt = words.findIndex((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
  const name = words[programAt]?.split("/").pop() ?? "";
  let depth = (SUBCOMMAND_DEPTH[name] ?? 0) + (words[programAt + 1] === "run" && name !== "docker" ? 1 : 0);
  const kept = words.slice(0, programAt + 1);
  for (const w of words.slice(programAt + 1)) {
    if (depth <= 0 || w.startsWith("-")) break;
    kept.push(w);
    depth--;
  }
  return `${kept.map(quote).join(" ")} *`;
}

/**
 * Decides how a bash command line runs: refused by a deny rule, run (with or without the network), or asked about,
 * with every reason. Each command of the line is matched on its own: a line is allowed by rules only when each of
 * its commands is. Precedence: deny beats ask beats allow. `bypass` skips the dangerous and network questions, but
 * not a rule's `ask`, and never "not sandboxed" (only `sandbox: "off"` runs commands unconfined without asking).
 */
export function decide(input: ApprovalInput): Approval {
  const where = { cwd: input.cwd, sessionId: input.sessionId };
  let parts: CommandPart[] | undefined;
  try {
    parts = commandParts(input.command);
  } catch {
    parts = undefined;
  }
  const confined = input.status?.enabled === true;
  const off = input.status?.kind === "off";
  const strongest = new Map<CommandPart, PermissionRule | undefined>();
  for (const part of parts ?? []) {
    const rules = input.rules;
    const strict = part.dynamic || !rules ? [] : rules.matching(part.strict, where);
    const bare = !rules ? [] : rules.matching(part.bare, where).filter((r) => r.action !== "allow");
    const best = [...bare, ...strict].sort((a, b) => order(a) - order(b))[0];
    if (best?.action === "deny") return { kind: "deny", rule: best, part: display(part.strict) };
    strongest.set(part, best);
  }
  const covered = (p: CommandPart) => {
    const r = strongest.get(p);
    return r?.action === "allow" && (confined || off || r.unsandboxed === true);
  };
  const allCovered = parts !== undefined && parts.length > 0 && parts.every(covered);

  const reasons: AskReason[] = [];
  const texts: string[] = [];
  let suggestFrom: { part: CommandPart; dangerous: boolean } | undefined;
  const askedRule = (parts ?? []).find((p) => strongest.get(p)?.action === "ask");
  if (askedRule) {
    reasons.push("rule");
    texts.push(`a rule asks about ${display(askedRule.strict, 60)} (${strongest.get(askedRule)?.pattern})`);
  }

  const line = classifyCommand(input.command);
  if (line.dangerous) {
    const own = new Set<string>();
    let uncoveredDanger: string[] = [];
    for (const p of parts ?? []) {
      const r = classifyCommand(p.text).reasons;
      for (const x of r) own.add(x);
      if (r.length && !covered(p)) {
        uncoveredDanger = uncoveredDanger.concat(r);
        suggestFrom ??= { part: p, dangerous: true };
      }
    }
    const across = line.reasons.filter((r) => !own.has(r));
    if (!parts || uncoveredDanger.length || (across.length && !allCovered)) {
      reasons.push("dangerous");
      texts.push(...(parts ? [...uncoveredDanger, ...across] : line.reasons));
    }
  }

  let network = false;
  const policy = input.sandbox?.networkPolicy(input.cwd) ?? "ask";
  const netParts = (parts ?? []).filter((p) => needsNetwork(p.bare));
  const wantsNet = input.wantsNetwork || netParts.length > 0;
  if (confined && wantsNet && policy === "allow") network = true;
  if (confined && wantsNet && policy === "ask") {
    const netCovered = input.wantsNetwork ? allCovered : netParts.every(covered);
    if (netCovered || input.permissionMode === "bypass") network = true;
    else {
      reasons.push("network");
      const p = netParts.find((x) => !covered(x)) ?? (parts ?? []).find((x) => !covered(x));
      texts.push(
        p ? `network: ${display(p.strict, 60)} needs the network` : "network: the command asks for the network",
      );
      if (p) suggestFrom ??= { part: p, dangerous: false };
    }
  }

  if (!confined && !off && !allCovered) {
    reasons.push("not sandboxed");
    texts.push(`not sandboxed: ${input.status?.reason ?? "the sandbox is not available"}`);
  }

  const asked =
    input.permissionMode === "bypass" ? reasons.filter((r) => r === "rule" || r === "not sandboxed") : reasons;
  if (!asked.length) return { kind: "run", network };
  if (!suggestFrom && parts) {
    const p = parts.find((x) => !covered(x));
    if (p) suggestFrom = { part: p, dangerous: classifyCommand(p.text).dangerous };
  }
  const suggestedRule =
    suggestFrom && !suggestFrom.part.dynamic ? suggestRule(suggestFrom.part, suggestFrom.dangerous) : undefined;
  return {
    kind: "ask",
    reasons: asked,
    text: texts.join("; "),
    ...(suggestedRule ? { suggestedRule } : {}),
    network: confined && wantsNet && policy !== "deny",
  };
}

function order(r: PermissionRule): number {
  return r.action === "deny" ? 0 : r.action === "ask" ? 1 : 2;
}
