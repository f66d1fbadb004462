import { ApiError, type SlashCommand } from "../../../core/index.js";
import { type CommandEnv, providerOf, type Reply, requireSession, setMeta } from "../env.js";

export function providerCommand(env: CommandEnv): SlashCommand {
  return {
    name: "provider",
    description: "Show the model providers, or pick this session's provider: /provider [id]",
    takesArgs: true,
    blocking: true,
    global: true,
    run: async (inv): Promise<Reply> => {
      const rec = inv.sessionId ? await requireSession(env, inv) : undefined;
      const providers = env.providers.list().map((p) => ({ id: p.id, description: p.description }));
      const current = providerOf(env, rec)?.id ?? null;
      if (!inv.args) return { message: `Provider: ${current ?? "(none configured)"}`, provider: current, providers };
      if (!rec) throw ApiError.badRequest("The provider is picked per session; send /provider <id> in a session");
      if (!env.providers.has(inv.args)) {
        throw ApiError.badRequest(
          `Unknown provider "${inv.args}" (known: ${providers.map((p) => p.id).join(", ") || "none"})`,
        );
      }
      await setMeta(env, rec.id, { provider: inv.args });
      return { message: `Provider set to ${inv.args}`, provider: inv.args, providers };
    },
  };
}
