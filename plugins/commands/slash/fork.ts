import type { SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, requireSession } from "../env.js";

export function forkCommand(env: CommandEnv): SlashCommand {
  return {
    name: "fork",
    description: "Copy what the model currently sees into a new, independent session",
    blocking: true,
    run: async (inv): Promise<Reply> => {
      const rec = await requireSession(env, inv);
      const fork = await env.sessions().fork(rec.id);
      return { message: `Forked into ${fork.id}`, sessionId: fork.id };
    },
  };
}
