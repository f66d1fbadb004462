import {
  ApiError,
  compactIfNeeded,
  estimateTokens,
  type SlashCommand,
  toProviderMessages,
} from "../../../core/index.js";
import { assertIdle, type CommandEnv, providerOf, type Reply, requireSession } from "../env.js";

async function compactNow(env: CommandEnv, id: string): Promise<Reply> {
  assertIdle(env, id);
  const rec = await env.sessions().require(id);
  const provider = providerOf(env, rec);
  if (!provider) throw ApiError.badRequest("No model provider is configured; compaction needs one");
  const deps = { sessions: env.sessions().writer };
  const tokensBefore = estimateTokens(toProviderMessages("", await deps.sessions.context(id)));
  const ac = new AbortController();
  const done = await compactIfNeeded({
    deps,
    rec,
    provider,
    signal: ac.signal,
    emit: (e) => env.sessions().publish(id, e),
    tokensBefore,
  });
  if (!done)
    return { message: "Nothing to compact (or the summary failed; see the session's events)", compacted: false };
  await env.sessions().update(id, {});
  return { message: "Older context summarised", compacted: true, tokensBefore };
}

export function compactCommand(env: CommandEnv): SlashCommand {
  return {
    name: "compact",
    description: "Summarise the older part of the context now",
    blocking: true,
    run: async (inv) => compactNow(env, (await requireSession(env, inv)).id),
  };
}
