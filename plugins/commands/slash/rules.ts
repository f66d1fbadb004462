import type { SlashCommand } from "../../../core/index.js";
import { type CommandEnv, cwdOf, type Reply } from "../env.js";
import { projectView, scoped } from "./info-support.js";

export function rulesCommand(env: CommandEnv): SlashCommand {
  return {
    name: "rules",
    description: "List the rules added to the system prompt",
    global: true,
    run: async (inv): Promise<Reply> => {
      const view = projectView(env, await cwdOf(env, inv));
      if (!view) return { message: "Rules are not available (the project plugin is not loaded)", rules: [] };
      const rules = scoped(view, "rules").map(({ scope, item }) => {
        const r = item as { name?: unknown; description?: unknown };
        return {
          name: String(r.name ?? ""),
          description: typeof r.description === "string" ? r.description : "",
          scope,
        };
      });
      return { message: rules.length ? `${rules.length} rule(s)` : "No rules", rules };
    },
  };
}
