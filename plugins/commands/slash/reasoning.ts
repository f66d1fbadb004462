import type { SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, requireSession, requireSettings, setMeta, usage } from "../env.js";

export const REASONING_LEVELS = ["off", "minimal", "low", "medium", "high", "on"];

export function reasoningCommand(env: CommandEnv): SlashCommand {
  return {
    name: "reasoning",
    description: `Show or set the reasoning level (${REASONING_LEVELS.join(", ")}, or reset): this session's, or without a session the default`,
    takesArgs: true,
    blocking: true,
    global: true,
    run: async (inv): Promise<Reply> => {
      const arg = inv.args.toLowerCase();
      if (!inv.sessionId) {
        // The level of new sessions (settings.json).
        if (arg === "reset" || arg === "default") await requireSettings(env).update({ reasoning: null });
        else if (arg) {
          if (!REASONING_LEVELS.includes(arg)) throw usage(`/reasoning [${REASONING_LEVELS.join("|")}|reset]`);
          await requireSettings(env).update({ reasoning: arg });
        }
        const level = env.settings()?.reasoning ?? null;
        return {
          message: `Reasoning of new sessions: ${level ?? "model default"}`,
          reasoning: level,
          options: REASONING_LEVELS,
        };
      }
      const rec = await requireSession(env, inv);
      if (!arg) {
        const level = rec.meta.reasoningEffort ?? null;
        return { message: `Reasoning: ${level ?? "model default"}`, reasoning: level, options: REASONING_LEVELS };
      }
      if (arg === "reset" || arg === "default") {
        await setMeta(env, rec.id, { reasoningEffort: undefined });
        return { message: "Reasoning: model default", reasoning: null, options: REASONING_LEVELS };
      }
      if (!REASONING_LEVELS.includes(arg)) throw usage(`/reasoning [${REASONING_LEVELS.join("|")}|reset]`);
      await setMeta(env, rec.id, { reasoningEffort: arg });
      return { message: `Reasoning: ${arg}`, reasoning: arg, options: REASONING_LEVELS };
    },
  };
}
