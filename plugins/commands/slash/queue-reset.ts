import type { SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, requireSession } from "../env.js";

export function queueResetCommand(env: CommandEnv): SlashCommand {
  return {
    name: "queue-reset",
    aliases: ["qr"],
    description: "Clear the queued follow-up messages",
    run: async (inv): Promise<Reply> => {
      const rec = await requireSession(env, inv);
      const cleared = env.turns()?.clearFollowups(rec.id) ?? 0;
      return { message: "Queue cleared", cleared };
    },
  };
}
