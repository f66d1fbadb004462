import type { SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, requireSession } from "../env.js";

export function abortCommand(env: CommandEnv): SlashCommand {
  return {
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
  };
}
