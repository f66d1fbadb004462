import type { SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, requireSession, requireTurns, usage } from "../env.js";
import { OUTCOME_TEXT } from "./session-support.js";

export function queueCommand(env: CommandEnv): SlashCommand {
  return {
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
  };
}
