import { defineTool, T, type ToolDefinition, toolError } from "../../core/index.js";
import type { ProjectResources } from "./context.js";

const Params = T.Object(
  {
    name: T.String({
      minLength: 1,
      maxLength: 64,
      description: "The skill name, as listed under Skills in the system prompt",
    }),
    args: T.Optional(T.String({ maxLength: 4000, description: "What to apply the skill to (optional)" })),
  },
  { additionalProperties: false },
);

/** `skill`: loads a skill's instructions (SKILL.md) so the model can follow them. */
export function skillTool(resources: () => ProjectResources): ToolDefinition<{ name: string; args?: string }> {
  return defineTool({
    name: "skill",
    description:
      "Load a skill: step-by-step instructions for a kind of task (listed under Skills in the system prompt). " +
      "Call it before starting a task a skill describes, then follow the returned instructions.",
    parameters: Params,
    readOnly: true,
    async execute(args, ctx) {
      const all = resources()
        .skills(ctx.cwd)
        .filter((s) => s.modelInvocable);
      const skill = all.find((s) => s.name === args.name);
      if (!skill) {
        const names = all.map((s) => s.name).join(", ") || "none";
        return toolError("not_found", `No skill named "${args.name}".`, `Use one of the available skills: ${names}.`);
      }
      const header = `# Skill: ${skill.name}\nSkill directory (bundled files are relative to it): ${skill.dir}`;
      const task = args.args?.trim() ? `\n\nApply it to: ${args.args.trim()}` : "";
      return { content: `${header}\n\n${skill.content}${task}`, meta: { skill: skill.name, source: skill.source } };
    },
  });
}
