import type { SlashCommand } from "../../../core/index.js";
import { type CommandEnv, cwdOf, type Reply } from "../env.js";

export function skillsCommand(env: CommandEnv): SlashCommand {
  return {
    name: "skills",
    description: "List the skills visible to this session",
    global: true,
    run: async (inv): Promise<Reply> => {
      const pc = env.project();
      if (!pc || typeof pc.skills !== "function")
        return { message: "Skills are not available (the project plugin is not loaded)", skills: [] };
      const skills = pc
        .skills(await cwdOf(env, inv))
        .map((s) => ({ name: s.name, description: s.description, source: s.source }));
      return { message: skills.length ? `${skills.length} skill(s)` : "No skills found", skills };
    },
  };
}
