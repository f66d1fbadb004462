import { join } from "node:path";
import { definePlugin, SettingsToken, T } from "../../core/index.js";
import { ModelCache } from "./model-cache.js";
import { createOpenAIProvider, DEFAULT_TIMEOUT_MS } from "./provider.js";
import { providerRoutes } from "./routes/index.js";

export { createOpenAIProvider, type OpenAIProviderOptions, type OpenAIProviderSettings } from "./provider.js";
export { ProviderError } from "./retry.js";
export { type VerificationResult, verifyProvider } from "./verify.js";

const OptionsSchema = T.Object({
  timeoutMs: T.Optional(
    T.Integer({
      minimum: 100,
      maximum: 3_600_000,
      description: `How long a chat call may wait for the response's headers, and for the next chunk of its stream (default ${DEFAULT_TIMEOUT_MS})`,
    }),
  ),
});

/** The provider for any OpenAI-compatible chat-completions endpoint, with model discovery and verification. */
export default definePlugin({
  manifest: {
    id: "provider-openai",
    version: "1.0.0",
    description: "OpenAI-compatible chat-completions provider (streaming, retries, model discovery, verification)",
    capabilities: ["provider", "routes", "secrets", "storage", "network"],
    configSchema: OptionsSchema,
  },
  deps: {
    settings: SettingsToken,
  },
  register(ctx) {
    // Read on every call: the host merges config and environment, and later edits apply without a restart.
    const provider = createOpenAIProvider(() => ctx.deps.settings.provider, {
      log: ctx.log,
      ...(ctx.options.timeoutMs !== undefined ? { timeoutMs: ctx.options.timeoutMs } : {}),
    });
    ctx.providers.add(provider);
    const cache = new ModelCache(() => join(ctx.dataDir(), "models.json"), ctx.log);
    for (const route of providerRoutes(provider, cache, () => ctx.deps.settings)) ctx.routes.add(route);
  },
});
