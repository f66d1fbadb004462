import type { SlashCommand } from "../../../core/index.js";
import { type CommandEnv, cwdOf, type Reply } from "../env.js";

export function reloadCommand(env: CommandEnv): SlashCommand {
  return {
    name: "reload",
    description: "Re-scan skills, rules, personas, context files and MCP servers (the conversation stays)",
    blocking: true,
    global: true,
    run: async (inv): Promise<Reply> => {
      const cwd = await cwdOf(env, inv);
      const pc = env.project() as { reload?: () => unknown } | undefined;
      await pc?.reload?.();
      env.bus.emit({ type: "resources.reload", cwd, ...(inv.sessionId ? { sessionId: inv.sessionId } : {}) });
      if (inv.sessionId) env.sessions().publish(inv.sessionId, { type: "resources_reloaded", cwd });
      return {
        message: pc?.reload
          ? "Reloaded skills, rules, personas, context files and MCP servers"
          : "Reload requested (no project plugin is loaded)",
      };
    },
  };
}
