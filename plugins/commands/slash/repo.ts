import type { SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, requireSession } from "../env.js";
import { repoInfo } from "../git.js";

export function repoCommand(env: CommandEnv): SlashCommand {
  return {
    name: "repo",
    description: "Show the git state of the working directory",
    run: async (inv): Promise<Reply> => {
      const info = await repoInfo((await requireSession(env, inv)).cwd);
      const message = info.isGit
        ? `${info.branch}${info.dirty ? " (uncommitted changes)" : ""}`
        : "Not a git repository";
      return { message, ...info };
    },
  };
}
