import type { SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, requireSession, requireTurns, usage } from "../env.js";
import { OUTCOME_TEXT } from "./session-support.js";

export function steerCommand(env: CommandEnv): SlashCommand {
  return {
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
  };
}
