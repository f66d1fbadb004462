import { ApiError, type SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, requireSession, requireTurns, usage } from "../env.js";

export const GOAL_DEFAULT_BUDGET = 25;

export const GOAL_MAX_BUDGET = 200;

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

export function goalCommand(env: CommandEnv): SlashCommand {
  return {
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
  };
}
