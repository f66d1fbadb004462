import type { SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, requireSession } from "../env.js";

/** `/plan` and `/build`: enter and leave plan mode. */
export function planModeCommands(env: CommandEnv): SlashCommand[] {
  return (["plan", "build"] as const).map(
    (mode): SlashCommand => ({
      name: mode,
      description:
        mode === "plan"
          ? "Enter plan mode (read-only tools; writes limited to the plans directory)"
          : "Leave plan mode (full toolset)",
      blocking: true,
      run: async (inv): Promise<Reply> => {
        const rec = await requireSession(env, inv);
        const after = await env.sessions().setMode(rec.id, mode);
        return { message: mode === "plan" ? "Plan mode" : "Build mode", mode: after.mode };
      },
    }),
  );
}
