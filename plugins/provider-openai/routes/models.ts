import { ApiError, defineRoute, errorMessage, type Provider, T } from "../../../core/index.js";
import { ModelInfoSchema, type ProviderRouteDeps } from "./shared.js";

export function listModelsRoute({ provider, cache }: ProviderRouteDeps) {
  return defineRoute({
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
  });
}
