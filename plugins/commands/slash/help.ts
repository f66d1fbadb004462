import type { CommandInvocation, SlashCommand } from "../../../core/index.js";
import type { CommandEnv, Reply } from "../env.js";

export function helpCommand(env: CommandEnv): SlashCommand {
  return {
    name: "help",
    description: "List the slash commands",
    global: true,
    run: (inv: CommandInvocation): Reply => {
      const cmds = env.commands
        .list()
        .filter((c) => inv.sessionId || c.global)
        .sort((a, b) => a.name.localeCompare(b.name));
      const message = cmds.map((c) => `/${c.name}: ${c.description}`).join("\n");
      return { message, commands: cmds.map((c) => `/${c.name}`) };
    },
  };
}
