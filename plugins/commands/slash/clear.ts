import type { SlashCommand } from "../../../core/index.js";
import { assertIdle, type CommandEnv, type Reply, requireSession } from "../env.js";

export function clearCommand(env: CommandEnv): SlashCommand {
  return {
    name: "clear",
    description: "Clear the context sent to the model; the visible history stays",
    blocking: true,
    run: async (inv): Promise<Reply> => {
      const rec = await requireSession(env, inv);
      const { originalTask } = await env.sessions().cleanContext(rec.id, () => assertIdle(env, rec.id));
      return {
        message: "Context cleared; the history stays visible",
        ...(originalTask ? { originalTask } : {}),
      };
    },
  };
}
