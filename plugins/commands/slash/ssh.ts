import type { SlashCommand } from "../../../core/index.js";
import { type CommandEnv, cwdOf, type Reply } from "../env.js";
import { projectView, scoped } from "./info-support.js";

export function sshCommand(env: CommandEnv): SlashCommand {
  return {
    name: "ssh",
    description: "Show the SSH hosts the agent can use",
    global: true,
    run: async (inv): Promise<Reply> => {
      const hosts = scoped(projectView(env, await cwdOf(env, inv)), "ssh").map(({ scope, item }) => ({
        name: String(item),
        scope,
      }));
      const enabled = env.tools.has("ssh");
      return {
        message: enabled ? `SSH: ${hosts.length} project host(s)` : "The ssh tool is not loaded",
        enabled,
        hosts,
      };
    },
  };
}
