import type { SlashCommand } from "../../../core/index.js";
import { type CommandEnv, cwdOf, type Reply } from "../env.js";
import { projectView, scoped } from "./info-support.js";

export function hooksCommand(env: CommandEnv): SlashCommand {
  return {
    name: "hooks",
    description: "List the tool hooks that run around tool calls",
    global: true,
    run: async (inv): Promise<Reply> => {
      const view = projectView(env, await cwdOf(env, inv));
      if (!view) return { message: "Hooks are not available (the project plugin is not loaded)", hooks: [] };
      const hooks = scoped(view, "hooks").map(({ scope, item }) => {
        const h = item as { event?: unknown; matcher?: unknown; command?: unknown };
        return {
          event: String(h.event ?? ""),
          matcher: typeof h.matcher === "string" ? h.matcher : "",
          command: Array.isArray(h.command) ? h.command.map(String) : [],
          scope,
        };
      });
      return { message: hooks.length ? `${hooks.length} hook(s)` : "No hooks", hooks };
    },
  };
}
