import { ApiError, type SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, requireSettings } from "../env.js";

export function themeCommand(env: CommandEnv): SlashCommand {
  return {
    name: "theme",
    description: "Show the colour themes, or pick one: /theme [id] (/theme system: follow each client's light or dark)",
    takesArgs: true,
    global: true,
    run: async (inv): Promise<Reply> => {
      const themes = env.themes.list();
      const list = themes.map((t) => ({ id: t.id, label: t.label }));
      const stored = env.settings()?.theme ?? env.prefs.get("theme");
      const current =
        typeof stored === "string" && env.themes.has(stored)
          ? stored
          : env.themes.has("dark")
            ? "dark"
            : (themes[0]?.id ?? null);
      if (!inv.args) return { message: `Theme: ${current ?? "(no themes installed)"}`, theme: current, themes: list };
      if (inv.args === "system" && !env.themes.has("system")) {
        await requireSettings(env).update({ theme: null });
        return { message: "Theme: each client follows its system's light or dark setting", theme: null };
      }
      const t = env.themes.get(inv.args);
      if (!t)
        throw ApiError.badRequest(`Unknown theme "${inv.args}" (known: ${list.map((x) => x.id).join(", ") || "none"})`);
      await requireSettings(env).update({ theme: t.id });
      return { message: `Theme set to ${t.label}`, theme: t.id, label: t.label, colors: t.colors };
    },
  };
}
