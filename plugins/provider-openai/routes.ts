import { type AnyRoute, ApiError, defineRoute, errorMessage, type Provider, T } from "../../core/index.js";
import type { ModelCache } from "./model-cache.js";
import { verifyProvider } from "./verify.js";

export const ModelInfoSchema = T.Object(
  {
    id: T.String(),
    ownedBy: T.Optional(T.String()),
    contextWindow: T.Optional(T.Integer({ description: "Context window in tokens, when the provider says" })),
    reasoningSupported: T.Optional(T.Boolean()),
  },
  { title: "ModelInfo" },
);

export const ProviderVerificationRequestSchema = T.Object(
  {
    url: T.String({ minLength: 1, maxLength: 2048, description: "Base URL of the endpoint, e.g. http://host/v1" }),
    apiKey: T.Optional(T.String({ maxLength: 4096, description: "Sent to the endpoint only; never stored" })),
  },
  { title: "ProviderVerificationRequest", additionalProperties: false },
);

export const ProviderVerificationSchema = T.Object(
  {
    ok: T.Boolean({ description: "Reachable and the key was not refused" }),
    probe: T.Union([
      T.Literal("ok"),
      T.Literal("auth"),
      T.Literal("permission"),
      T.Literal("unreachable"),
      T.Literal("unknown"),
    ]),
    models: T.Optional(T.Array(T.String(), { description: "Model ids the endpoint lists" })),
    error: T.Optional(T.String()),
    status: T.Optional(T.Integer({ description: "HTTP status of a failed probe" })),
  },
  { title: "ProviderVerification" },
);

/** Routes of the provider plugin (relative to /api/v1). */
export function providerRoutes(provider: Provider, cache: ModelCache): AnyRoute[] {
  return [
    defineRoute({
      method: "GET",
      path: "/models",
      operationId: "listModels",
      summary: "Models served by the configured provider (a live call to its /models; refreshes the cache)",
      tags: ["catalog"],
      responses: { 200: T.Array(ModelInfoSchema) },
      errors: [502],
      handler: async (req) => {
        let models: Awaited<ReturnType<Provider["listModels"]>>;
        try {
          models = await provider.listModels(req.signal);
        } catch (err) {
          throw new ApiError(502, `could not list the provider's models: ${errorMessage(err)}`);
        }
        await cache.set(models);
        return { body: models };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/models/cached",
      operationId: "listCachedModels",
      summary: "The last model list fetched successfully ([] if never); never calls the provider",
      tags: ["catalog"],
      responses: { 200: T.Array(ModelInfoSchema) },
      handler: async () => ({ body: await cache.get() }),
    }),
    defineRoute({
      method: "POST",
      path: "/provider/verify",
      operationId: "verifyProvider",
      summary: "Probes an endpoint's /models with a key (10 s bound); nothing is saved and the key is not echoed",
      tags: ["settings"],
      body: ProviderVerificationRequestSchema,
      responses: { 200: ProviderVerificationSchema },
      handler: async (req) => {
        const url = parseEndpoint(req.body.url);
        return { body: await verifyProvider(url, req.body.apiKey || undefined, req.signal) };
      },
    }),
  ];
}

/** Only absolute http(s) URLs: anything else would make the daemon fetch arbitrary schemes. */
function parseEndpoint(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw ApiError.badRequest("url must be an absolute http(s) URL");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw ApiError.badRequest("url must be an http(s) URL");
  return u.toString().replace(/\/+$/, "");
}
