import { ApiError, type SlashCommand } from "../../../core/index.js";
import { type CommandEnv, envNote, type Reply, requireSession, requireSettings, usage } from "../env.js";

const MODEL_ID = /^[^\s]{1,200}$/;

const MAX_LISTED_MODELS = 60;

/** `/model` without an argument: the current model and the ones the provider lists (the current one marked). */
function modelListing(current: string | null, ids: string[], error: string | undefined): string {
  const head = `Model: ${current ?? "(none)"}`;
  if (!ids.length)
    return `${head}\n${error ? `The provider's models could not be listed: ${error}` : "The provider lists no models."}`;
  const shown = ids.slice(0, MAX_LISTED_MODELS).map((m) => `${m === current ? "● " : "  "}${m}`);
  const more = ids.length > shown.length ? [`  … and ${ids.length - shown.length} more`] : [];
  return [head, `Available (${ids.length}), switch with /model <id>:`, ...shown, ...more].join("\n");
}

export function modelCommand(env: CommandEnv): SlashCommand {
  return {
    name: "model",
    description: "Show the models, or switch the model: this session's, or without a session the default",
    takesArgs: true,
    blocking: true,
    global: true,
    run: async (inv): Promise<Reply> => {
      const rec = inv.sessionId ? await requireSession(env, inv) : undefined;
      const current = rec?.model ?? env.settings()?.provider.model ?? null;
      const id = inv.args;
      if (!id) {
        const { ids, error } = await env.models.refresh();
        return {
          message: modelListing(current, ids, error),
          model: current,
          models: ids,
          ...(error ? { error } : {}),
        };
      }
      if (!MODEL_ID.test(id)) throw usage("/model <model id>");
      // A model the provider does not list is refused (a typo would only fail at the next message); when the
      // provider cannot list its models, any id is taken.
      let known = env.models.known();
      if (!known.includes(id)) known = (await env.models.refresh()).ids;
      if (known.length && !known.includes(id)) {
        const close = known.filter((m) => m.toLowerCase().includes(id.toLowerCase())).slice(0, 8);
        throw ApiError.badRequest(
          `Unknown model "${id}": the provider does not list it. ${
            close.length ? `Did you mean: ${close.join(", ")}?` : "Send /model to see the models it lists."
          }`,
        );
      }
      const note = known.length ? "" : " (the provider's model list is not available to check it)";
      if (!rec) {
        // The default model of new sessions (settings.json).
        await requireSettings(env).update({ provider: { model: id } });
        return {
          message: `Default model set to ${id}${note}${envNote(env, "provider.model")}`,
          model: env.settings()?.provider.model ?? id,
          saved: id,
        };
      }
      await env.sessions().update(rec.id, { model: id });
      return { message: `Model set to ${id}${note}`, model: id };
    },
  };
}
