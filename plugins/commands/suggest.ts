import type { SessionRecord } from "../../core/index.js";
import { catalogue } from "./catalogue.js";
import type { CommandEnv } from "./env.js";
import { REASONING_LEVELS } from "./slash/reasoning.js";

export interface Suggestion {
  /** The whole composer text to put in place of the query. */
  value: string;
  label: string;
}

const MAX_SUGGESTIONS = 50;

type Candidates = (env: CommandEnv, rec: SessionRecord | undefined, before: string[]) => Array<[string, string]>;

const same = (xs: string[]): Array<[string, string]> => xs.map((x) => [x, x]);

/** Argument completions per command: [value, label] pairs for the word being typed. */
const ARGUMENTS: Record<string, Candidates> = {
  persona: (env, rec) =>
    (env.project()?.personas(rec?.cwd) ?? env.personas.list()).map((p) => [p.name, `${p.label} — ${p.description}`]),
  theme: (env) => env.themes.list().map((t) => [t.id, t.label]),
  model: (env, rec) => {
    env.models.warm();
    const ids = new Set(env.models.known());
    if (rec?.model) ids.add(rec.model);
    const def = env.settings()?.provider.model;
    if (def) ids.add(def);
    return same([...ids].sort());
  },
  provider: (env) => env.providers.list().map((p) => [p.id, p.description]),
  permissions: () => [
    ["default", "Ask before risky commands"],
    ["bypass", "Never ask"],
  ],
  reasoning: () => same([...REASONING_LEVELS, "reset"]),
  "turn-cap": () => [["reset", "Back to the default cap"]],
  undo: () => [["--force", "Also delete files created since the turn started"]],
  goal: () => [["--steps", "--steps N: budget of model calls"]],
  worktree: (_env, _rec, before) =>
    before.length
      ? []
      : [
          ["list", "List the repository's worktrees"],
          ["new", "Move this session into a new worktree (optional branch name)"],
          ["merge", "Commit and merge the worktree's branch into its base"],
          ["discard", "Remove the worktree and its branch"],
        ],
  mcp: (env, _rec, before) => {
    const servers = env.mcp()?.list() ?? [];
    if (before[0] === "reconnect") return servers.map((s) => [s.name, `${s.name} (${s.state})`]);
    if (before.length) return [];
    return [
      ["list", "List the servers"],
      ["reconnect", "Reconnect a server"],
    ];
  },
};

/**
 * Composer completions for a partial command line: command names while the first word is typed, then the
 * arguments of the commands that have a known set (personas, themes, models, ...). Anything else: none.
 */
export function suggest(env: CommandEnv, q: string, rec: SessionRecord | undefined): Suggestion[] {
  const text = q.trimStart();
  if (!text.startsWith("/")) return [];
  const space = text.search(/\s/);
  if (space === -1) {
    const prefix = text.slice(1).toLowerCase();
    return catalogue(env)
      .filter((c) => c.name.slice(1).startsWith(prefix))
      .slice(0, MAX_SUGGESTIONS)
      .map((c) => ({
        value: c.takesArgs ? `${c.name} ` : c.name,
        label: `${c.argumentHint ? `${c.name} ${c.argumentHint}: ` : ""}${c.description}`,
      }));
  }
  const typed = text.slice(1, space).toLowerCase();
  const name = env.commands.get(typed)?.name ?? env.commands.list().find((c) => c.aliases?.includes(typed))?.name;
  const candidates = name ? ARGUMENTS[name] : undefined;
  if (!candidates) return [];
  const rest = text.slice(space).replace(/^\s+/, "");
  const parts = rest.split(/\s+/);
  const partial = (parts.pop() ?? "").toLowerCase();
  const head = `/${name} ${parts.length ? `${parts.join(" ")} ` : ""}`;
  return candidates(env, rec, parts)
    .filter(([v]) => v.toLowerCase().startsWith(partial))
    .slice(0, MAX_SUGGESTIONS)
    .map(([v, label]) => ({ value: `${head}${v}`, label }));
}
