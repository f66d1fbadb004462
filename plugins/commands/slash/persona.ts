import { ApiError, type Persona, type SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, requireSession, requireSettings } from "../env.js";

function visiblePersonas(env: CommandEnv, cwd: string | undefined): Persona[] {
  return env.project()?.personas(cwd) ?? env.personas.list();
}

export function personaCommand(env: CommandEnv): SlashCommand {
  return {
    name: "persona",
    description: "Show the personas, or switch the persona: this session's, or without a session the default",
    takesArgs: true,
    blocking: true,
    global: true,
    run: async (inv): Promise<Reply> => {
      if (!inv.sessionId) {
        const all = visiblePersonas(env, undefined);
        const list = all.map((p) => ({ name: p.name, label: p.label, description: p.description, source: p.source }));
        const current = env.settings()?.defaultPersona ?? "default";
        if (!inv.args) return { message: `Default persona: ${current}`, persona: current, personas: list };
        const p = all.find((x) => x.name === inv.args);
        if (!p) {
          throw ApiError.badRequest(
            `Unknown persona "${inv.args}" (known: ${all.map((x) => x.name).join(", ") || "none"})`,
          );
        }
        await requireSettings(env).update({ defaultPersona: p.name });
        return { message: `Default persona set to ${p.label}`, persona: p.name, personas: list };
      }
      const rec = await requireSession(env, inv);
      const all = visiblePersonas(env, rec.cwd);
      const list = all.map((p) => ({ name: p.name, label: p.label, description: p.description, source: p.source }));
      if (!inv.args) return { message: `Persona: ${rec.persona}`, persona: rec.persona, personas: list };
      const p = all.find((x) => x.name === inv.args);
      if (!p)
        throw ApiError.badRequest(
          `Unknown persona "${inv.args}" (known: ${all.map((x) => x.name).join(", ") || "none"})`,
        );
      await env.sessions().update(rec.id, { persona: p.name });
      return { message: `Persona set to ${p.label}`, persona: p.name, personas: list };
    },
  };
}
