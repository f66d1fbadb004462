import type { SlashCommand } from "../../../core/index.js";
import type { CommandEnv, Reply } from "../env.js";

export function webCommand(env: CommandEnv): SlashCommand {
  return {
    name: "web",
    description: "Show whether web search and fetch are available",
    global: true,
    run: (): Reply => {
      const webSearch = env.tools.has("web_search");
      const webFetch = env.tools.has("web_fetch");
      return {
        message:
          webSearch || webFetch
            ? `Web tools: ${[webSearch && "web_search", webFetch && "web_fetch"].filter(Boolean).join(", ")}`
            : "Web tools are not loaded",
        webSearch,
        webFetch,
      };
    },
  };
}
