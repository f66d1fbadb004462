import {
  ApiError,
  type ChatOutcome,
  type CommandInvocation,
  compactIfNeeded,
  estimateTokens,
  MAX_SEQ,
  type SlashCommand,
  toProviderMessages,
} from "../../core/index.js";
import {
  assertIdle,
  type CommandEnv,
  providerOf,
  type Reply,
  requireSession,
  requireSettings,
  requireTurns,
  setMeta,
  usage,
  words,
} from "./env.js";
import { RESTORE_MODES, type RestoreMode, redo, rewind } from "./rewind.js";

export const GOAL_DEFAULT_BUDGET = 25;
export const GOAL_MAX_BUDGET = 200;
export const TURN_CAP_MIN = 10;
export const TURN_CAP_MAX = 10_000;
const DEFAULT_TURN_CAP = 500;

const OUTCOME_TEXT: Record<ChatOutcome, string> = {
  started: "Sent",
  steered: "Steered into the running turn",
  queued: "Queued for after this turn",
  duplicate: "Already accepted",
};

/** Commands that act on one session's turns, history and files. */
export function sessionCommands(env: CommandEnv): SlashCommand[] {
  return [
    {
      name: "undo",
      description:
        "Restore files from the last turn's checkpoint and drop that turn's messages (--force: also delete files it created)",
      takesArgs: true,
      blocking: true,
      run: async (inv): Promise<Reply> => {
        const rec = await requireSession(env, inv);
        const flags = words(inv.args);
        if (flags.some((f) => f !== "--force" && f !== "-f")) throw usage("/undo [--force]");
        assertIdle(env, rec.id);
        const out = await env.checkpoints.undo(rec.id, rec.cwd, flags.length > 0);
        if (!out) return { message: "Nothing to undo", undone: false };
        await env.store().truncateMessages(rec.id, out.seq);
        const after = await env.sessions().update(rec.id, {});
        const removed = out.filesRestored ? out.created : [];
        env.sessions().publish(rec.id, {
          type: "undo",
          fromSeq: out.seq,
          filesRestored: out.filesRestored,
          restored: [...out.modified, ...out.deleted],
          removed,
        });
        const files = out.filesRestored
          ? `restored ${out.modified.length + out.deleted.length} file(s), removed ${removed.length}`
          : (out.note ?? "no files had changed");
        return {
          message: `Undid the last turn: ${files}`,
          undone: true,
          fromSeq: out.seq,
          filesRestored: out.filesRestored,
          restored: [...out.modified, ...out.deleted],
          removed,
          messageCount: after.messageCount,
        };
      },
    },
    {
      name: "rewind",
      description:
        "Go back to a user message: /rewind <seq> [both|code|conversation]; without a seq, lists the messages to pick",
      takesArgs: true,
      blocking: true,
      run: async (inv): Promise<Reply> => {
        const rec = await requireSession(env, inv);
        const [seqArg, mode = "both", ...extra] = words(inv.args);
        if (!seqArg) {
          const page = await env.sessions().history(rec.id, MAX_SEQ, MAX_REWIND_CHOICES);
          const choices = page.messages
            .filter((m) => m.role === "user" && typeof m.seq === "number")
            .map((m) => ({ seq: m.seq as number, text: (m.content ?? "").slice(0, 200) }));
          return { message: choices.length ? "Pick a message to rewind to" : "No messages to rewind to", choices };
        }
        if (!/^\d+$/.test(seqArg) || extra.length || !(RESTORE_MODES as readonly string[]).includes(mode)) {
          throw usage("/rewind [<message seq> [both|code|conversation]]");
        }
        const out = await rewind(env, rec, Number(seqArg), mode as RestoreMode);
        return { message: `Rewound to message ${seqArg} (${mode}): ${fileSummary(out)}`, ...out };
      },
    },
    {
      name: "redo",
      description: "Undo the last rewind: its files and messages come back",
      blocking: true,
      run: async (inv): Promise<Reply> => {
        const out = await redo(env, await requireSession(env, inv));
        if (!out) return { message: "Nothing to redo", redone: false };
        return { message: `Rewind undone: ${fileSummary(out)}`, redone: true, ...out };
      },
    },
    {
      name: "fork",
      description: "Copy what the model currently sees into a new, independent session",
      blocking: true,
      run: async (inv): Promise<Reply> => {
        const rec = await requireSession(env, inv);
        const fork = await env.sessions().fork(rec.id);
        return { message: `Forked into ${fork.id}`, sessionId: fork.id };
      },
    },
    {
      name: "steer",
      aliases: ["s"],
      description: "Inject a message into the running turn (sends it as a prompt when idle)",
      takesArgs: true,
      run: async (inv): Promise<Reply> => {
        const rec = await requireSession(env, inv);
        if (!inv.args) throw usage("/steer <message>");
        const status = await requireTurns(env).steer(rec, inv.args);
        return { message: OUTCOME_TEXT[status], status };
      },
    },
    {
      name: "queue",
      aliases: ["q"],
      description: "Queue a message for after the current turn (sends it as a prompt when idle)",
      takesArgs: true,
      run: async (inv): Promise<Reply> => {
        const rec = await requireSession(env, inv);
        if (!inv.args) throw usage("/queue <message>");
        const status = await requireTurns(env).followup(rec, inv.args);
        return { message: OUTCOME_TEXT[status], status };
      },
    },
    {
      name: "queue-reset",
      aliases: ["qr"],
      description: "Clear the queued follow-up messages",
      run: async (inv): Promise<Reply> => {
        const rec = await requireSession(env, inv);
        const cleared = env.turns()?.clearFollowups(rec.id) ?? 0;
        return { message: "Queue cleared", cleared };
      },
    },
    {
      name: "abort",
      aliases: ["stop"],
      description: "Stop the running turn and clear the steering and follow-up queues",
      run: async (inv): Promise<Reply> => {
        const rec = await requireSession(env, inv);
        const turns = env.turns();
        const wasRunning = turns?.status(rec.id) === "running";
        await turns?.abort(rec.id, "user");
        return { message: wasRunning ? "Aborted" : "Nothing is running", aborted: wasRunning };
      },
    },
    {
      name: "goal",
      description: `Work autonomously toward a goal in one turn: /goal [N] <description> or --steps N (budget: model calls, default ${GOAL_DEFAULT_BUDGET})`,
      takesArgs: true,
      blocking: true,
      run: async (inv): Promise<Reply> => {
        const rec = await requireSession(env, inv);
        const { budget, goal } = parseGoal(inv.args);
        const status = await requireTurns(env).chat(rec, { text: goalPrompt(goal, budget), budget });
        return { message: `Working toward the goal autonomously (budget: ${budget})…`, status, budget };
      },
    },
    {
      name: "turn-cap",
      description: `Show or set the per-turn iteration cap (${TURN_CAP_MIN}..${TURN_CAP_MAX}, or reset): this session's, or without a session the default`,
      takesArgs: true,
      global: true,
      run: async (inv): Promise<Reply> => {
        const fallback = configuredCap(env);
        const arg = inv.args.toLowerCase();
        const parse = (): number | "reset" => {
          if (arg === "reset" || arg === "off" || arg === "default") return "reset";
          const n = /^\d+$/.test(arg) ? Number(arg) : Number.NaN;
          if (!Number.isInteger(n) || n < TURN_CAP_MIN || n > TURN_CAP_MAX) {
            throw ApiError.badRequest(
              `The turn cap must be an integer from ${TURN_CAP_MIN} to ${TURN_CAP_MAX}, or reset`,
            );
          }
          return n;
        };
        if (!inv.sessionId) {
          // The daemon-wide default (settings.json), for every session without a cap of its own.
          if (!arg) {
            return {
              message: `Default per-turn iteration cap: ${fallback}`,
              turnCap: null,
              default: fallback,
              effective: fallback,
            };
          }
          const value = parse();
          await requireSettings(env).update({ maxTurnIterations: value === "reset" ? null : value });
          const now = configuredCap(env);
          return {
            message:
              value === "reset"
                ? `Default per-turn iteration cap reset (${now})`
                : `Default per-turn iteration cap set to ${now} (applies from the next model call)`,
            turnCap: null,
            default: now,
            effective: now,
          };
        }
        const rec = await requireSession(env, inv);
        if (!arg) {
          const own = typeof rec.meta.turnCap === "number" ? rec.meta.turnCap : null;
          const effective = own ?? fallback;
          return {
            message: `Per-turn iteration cap: ${effective}${own === null ? " (default)" : ""}`,
            turnCap: own,
            default: fallback,
            effective,
          };
        }
        const value = parse();
        if (value === "reset") {
          await setMeta(env, rec.id, { turnCap: undefined });
          return {
            message: `Per-turn iteration cap reset to the default (${fallback})`,
            turnCap: null,
            default: fallback,
            effective: fallback,
          };
        }
        await setMeta(env, rec.id, { turnCap: value });
        return {
          message: `Per-turn iteration cap set to ${value} (applies from the next model call)`,
          turnCap: value,
          default: fallback,
          effective: value,
        };
      },
    },
    ...(["plan", "build"] as const).map(
      (mode): SlashCommand => ({
        name: mode,
        description:
          mode === "plan"
            ? "Enter plan mode (read-only tools; writes limited to the plans directory)"
            : "Leave plan mode (full toolset)",
        blocking: true,
        run: async (inv): Promise<Reply> => {
          const rec = await requireSession(env, inv);
          const after = await env.sessions().setMode(rec.id, mode);
          return { message: mode === "plan" ? "Plan mode" : "Build mode", mode: after.mode };
        },
      }),
    ),
    {
      name: "permissions",
      description:
        "Show or set how risky commands are handled: default (ask) or bypass (never ask); `rules` lists the " +
        "approval rules, `revoke <id>` removes one",
      takesArgs: true,
      global: true,
      run: async (inv): Promise<Reply> => {
        const [sub, ...rest] = inv.args.trim().split(/\s+/);
        if (sub === "rules" || sub === "revoke") return ruleCommand(env, inv, sub, rest.join(" "));
        const arg = inv.args.toLowerCase();
        if (arg && arg !== "default" && arg !== "bypass")
          throw usage("/permissions [default|bypass|rules|revoke <id>]");
        if (!inv.sessionId) {
          // The mode of new sessions (settings.json); existing sessions keep theirs.
          if (arg) await requireSettings(env).update({ permissionMode: arg === "bypass" ? "bypass" : "default" });
          const mode = env.settings()?.permissionMode ?? "default";
          return {
            message:
              mode === "bypass"
                ? `${arg ? "New sessions will start" : "New sessions start"} in bypass mode (risky commands run without confirmation)`
                : `${arg ? "New sessions will start" : "New sessions start"} in default mode (risky commands ask for confirmation)`,
            permissionMode: mode,
            options: ["default", "bypass"],
          };
        }
        const rec = await requireSession(env, inv);
        if (!arg) {
          const mode = rec.meta.permissionMode === "bypass" ? "bypass" : "default";
          return { message: `Permission mode: ${mode}`, permissionMode: mode, options: ["default", "bypass"] };
        }
        await setMeta(env, rec.id, { permissionMode: arg === "bypass" ? "bypass" : undefined });
        return {
          message:
            arg === "bypass"
              ? "Permission mode: bypass (risky commands run without confirmation)"
              : "Permission mode: default (risky commands ask for confirmation)",
          permissionMode: arg,
          options: ["default", "bypass"],
        };
      },
    },
    {
      name: "clear",
      description: "Clear the context sent to the model; the visible history stays",
      blocking: true,
      run: async (inv): Promise<Reply> => {
        const rec = await requireSession(env, inv);
        const { body } = await env.sessions().cleanContext(rec.id, () => assertIdle(env, rec.id));
        return {
          message: "Context cleared; the history stays visible",
          ...(body.originalTask ? { originalTask: body.originalTask } : {}),
        };
      },
    },
    {
      name: "compact",
      description: "Summarise the older part of the context now",
      blocking: true,
      run: async (inv) => compactNow(env, (await requireSession(env, inv)).id),
    },
  ];
}

const MAX_REWIND_CHOICES = 50;

function fileSummary(out: { filesRestored: boolean; restored: string[]; removed: string[] }): string {
  return out.filesRestored
    ? `restored ${out.restored.length} file(s), removed ${out.removed.length}`
    : "no files to restore";
}

function configuredCap(env: CommandEnv): number {
  const v = env.settings()?.maxTurnIterations;
  return typeof v === "number" ? v : DEFAULT_TURN_CAP;
}

export function parseGoal(args: string): { budget: number; goal: string } {
  let rest = args.trim();
  let budget = GOAL_DEFAULT_BUDGET;
  const m = /^(?:(?:--steps|-s)(?:\s+|=)(\S+)|(\d+))(?:\s+|$)/.exec(rest);
  if (m) {
    const raw = (m[1] ?? m[2]) as string;
    budget = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isInteger(budget) || budget < 1 || budget > GOAL_MAX_BUDGET) {
      throw ApiError.badRequest(`The goal budget must be an integer from 1 to ${GOAL_MAX_BUDGET}`);
    }
    rest = rest.slice(m[0].length).trim();
  }
  if (!rest) throw usage("/goal [N] <description>  or  /goal --steps N <description>");
  return { budget, goal: rest };
}

function goalPrompt(goal: string, budget: number): string {
  return [
    "Work autonomously toward the goal below until it is done. Do not stop to ask for confirmation between steps;",
    "make reasonable decisions, verify your work (build, tests) and finish with a short summary of what was done and",
    `what remains. You have a budget of ${budget} model calls for this turn.`,
    "",
    `Goal: ${goal}`,
  ].join("\n");
}

async function compactNow(env: CommandEnv, id: string): Promise<Reply> {
  assertIdle(env, id);
  const rec = await env.sessions().require(id);
  const provider = providerOf(env, rec);
  if (!provider) throw ApiError.badRequest("No model provider is configured; compaction needs one");
  const store = env.store();
  const deps = { store };
  const tokensBefore = estimateTokens(toProviderMessages("", await store.contextMessages(id)));
  const ac = new AbortController();
  const done = await compactIfNeeded({
    deps,
    rec,
    provider,
    signal: ac.signal,
    emit: (e) => env.sessions().publish(id, e),
    tokensBefore,
  });
  if (!done)
    return { message: "Nothing to compact (or the summary failed; see the session's events)", compacted: false };
  await env.sessions().update(id, {});
  return { message: "Older context summarised", compacted: true, tokensBefore };
}

/** `/permissions rules` (those that can apply in the session's directory) and `/permissions revoke <id>`. */
async function ruleCommand(env: CommandEnv, inv: CommandInvocation, sub: string, arg: string): Promise<Reply> {
  const rules = env.rules();
  if (!rules) throw ApiError.conflict("Approval rules are not available (the permissions plugin is not loaded)");
  if (sub === "revoke") {
    if (!arg) throw usage("/permissions revoke <rule id>");
    await rules.remove(arg);
    return { message: `Revoked rule ${arg}`, revoked: arg };
  }
  const cwd = inv.sessionId ? (await env.sessions().require(inv.sessionId)).cwd : undefined;
  const list = rules.list(cwd);
  const lines = list.map(
    (r) =>
      `${r.id}  ${r.action.padEnd(5)} ${r.pattern}  (${r.scope}${r.project ? ` ${r.project}` : ""}${r.source === "config" ? ", config.json" : ""})`,
  );
  return {
    message: list.length
      ? `Approval rules (deny beats ask beats allow):\n${lines.join("\n")}`
      : "No approval rules yet. Answer a confirmation with an 'always' choice to add one.",
    rules: list,
  };
}
