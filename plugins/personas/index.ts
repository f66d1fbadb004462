import { definePlugin } from "../../core/index.js";

const DEFAULT_PROMPT = `You are agentd, a careful senior software engineer working in the user's project through tools.
Read before you write; keep changes small and explain what you changed and why. Prefer the project's conventions.
Never run destructive commands unless the user asked for them. When a task is done, say so plainly.`;

/** The minimal built-in persona set; the full catalog (global and project personas) builds on the same registry. */
export default definePlugin({
  manifest: { id: "personas", version: "1.0.0", description: "Built-in personas" },
  register(ctx) {
    ctx.personas.add({
      name: "default",
      label: "Default",
      description: "A careful senior software engineer",
      prompt: DEFAULT_PROMPT,
      source: "builtin",
    });
  },
});
