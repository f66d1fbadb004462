import { ApiError, type DaemonSettings, type Provider, T } from "../../../core/index.js";
import type { ModelCache } from "../model-cache.js";

/** What the provider routes use. */
export interface ProviderRouteDeps {
  provider: Provider;
  cache: ModelCache;
  settings: () => DaemonSettings;
}

export const ModelInfoSchema = T.Object(
  {
    id: T.String(),
    ownedBy: T.Optional(T.String()),
    contextWindow: T.Optional(T.Integer({ description: "Context window in tokens, when the provider says" })),
    reasoningSupported: T.Optional(T.Boolean()),
  },
  { title: "ModelInfo" },
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

/** Only absolute http(s) URLs: anything else would make the daemon fetch arbitrary schemes. */
export function parseEndpoint(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw ApiError.badRequest("url must be an absolute http(s) URL");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw ApiError.badRequest("url must be an http(s) URL");
  return u.toString().replace(/\/+$/, "");
}
