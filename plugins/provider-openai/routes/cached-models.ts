import { defineRoute, T } from "../../../core/index.js";
import { ModelInfoSchema, type ProviderRouteDeps } from "./shared.js";

export function cachedModelsRoute({ cache }: ProviderRouteDeps) {
  return defineRoute({
    method: "GET",
    path: "/models/cached",
    operationId: "listCachedModels",
    summary: "The last model list fetched successfully ([] if never); never calls the provider",
    tags: ["catalog"],
    responses: { 200: T.Array(ModelInfoSchema) },
    handler: async () => ({ body: await cache.get() }),
  });
}
