import type { SlashCommand } from "../../core/index.js";
import type { CommandEnv } from "./env.js";

/** Argument hints of the built-in commands (a contributed command brings its own `argumentHint`). */
const HINTS: Record<string, string> = {
  undo: "[--force]",
  steer: "<message>",
  queue: "<message>",
  goal: "[N|--steps N] <description>",
  "turn-cap": "[N|reset]",
  permissions: "[default|bypass|rules|revoke <id>]",
  model: "[model id]",
  persona: "[name]",
  provider: "[id]",
  reasoning: "[level|reset]",
  theme: "[id]",
  mcp: "[list|reconnect <name>]",
  worktree: "[list|new [branch]|merge|discard]",
  rewind: "[message seq] [both|code|conversation]",
};

export type CommandScope = "session" | "global" | "both";

export interface CatalogueEntry {
  /** With the leading slash. */
  name: string;
  description: string;
  /** For an alias: the command it runs (with the slash). */
  aliasOf?: string;
  aliases?: string[];
  argumentHint: string;
  takesArgs: boolean;
  blocking: boolean;
  global: boolean;
  scope: CommandScope;
  command: SlashCommand;
}

/** Every command name and every alias, sorted: what GET /commands lists and /suggest completes. */
export function catalogue(env: CommandEnv): CatalogueEntry[] {
  const out: CatalogueEntry[] = [];
  for (const c of env.commands.list()) {
    if (c.projectRoot) continue; // a project plugin's command: run in its project's sessions, not listed globally
    const base = {
      description: c.description,
      argumentHint: c.argumentHint ?? HINTS[c.name] ?? (c.takesArgs ? "[arguments]" : ""),
      takesArgs: c.takesArgs === true,
      blocking: c.blocking === true,
      global: c.global === true,
      scope: (c.global ? "both" : "session") as CommandScope,
      command: c,
    };
    out.push({ name: `/${c.name}`, ...(c.aliases?.length ? { aliases: c.aliases.map((a) => `/${a}`) } : {}), ...base });
    for (const a of c.aliases ?? []) {
      if (!env.commands.has(a)) out.push({ name: `/${a}`, aliasOf: `/${c.name}`, ...base });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}
