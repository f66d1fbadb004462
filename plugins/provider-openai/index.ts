import { join } from "node:path";
import { definePlugin, SettingsToken } from "../../core/index.js";
import { ModelCache } from "./model-cache.js";
import { createOpenAIProvider } from "./provider.js";
import { providerRoutes } from "./routes.js";

export { createOpenAIProvider, type OpenAIProviderOptions, type OpenAIProviderSettings } from "./provider.js";
export { ProviderError } from "./retry.js";
export { type VerificationResult, verifyProvider } from "./verify.js";

/** The provider for any OpenAI-compatible chat-completions endpoint, with model discovery and verification. */
export default definePlugin({
  manifest: {
    id: "provider-openai",
    version: "1.0.0",
    description: "OpenAI-compatible chat-completions provider (streaming, retries, model discovery, verification)",
    capabilities: ["provider", "routes", "secrets", "storage", "network"],
  },
  register(ctx) {
    // Read on every call: the host merges config and environment, and later edits apply without a restart.
    const provider = createOpenAIProvider(() => ctx.services.get(SettingsToken).provider, { log: ctx.log });
    ctx.providers.add(provider);
    const cache = new ModelCache(() => join(ctx.dataDir(), "models.json"), ctx.log);
    for (const route of providerRoutes(provider, cache, () => ctx.services.get(SettingsToken))) ctx.routes.add(route);
  },
});
