import { type AnyRoute, ApiError, defineRoute, T } from "../../../core/index.js";
import { verifyProvider } from "../verify.js";
import { type ProviderRouteDeps, ProviderVerificationSchema, parseEndpoint } from "./shared.js";

export const ProviderSettingsRequestSchema = T.Object(
  {
    baseURL: T.String({ minLength: 1, maxLength: 2048, description: "Base URL of the endpoint, e.g. http://host/v1" }),
    apiKey: T.Optional(
      T.String({
        maxLength: 4096,
        description:
          'The key (never returned or logged). "" removes the saved key; absent keeps it when the endpoint\'s ' +
          "origin is unchanged, and drops it otherwise (a key is never sent to another host)",
      }),
    ),
    model: T.Optional(T.String({ minLength: 1, maxLength: 200, description: "Default model of new sessions" })),
  },
  { title: "ProviderSettingsRequest", additionalProperties: false },
);

const ProviderField = T.Union([T.Literal("baseURL"), T.Literal("apiKey"), T.Literal("model")]);

export const ProviderSettingsSchema = T.Object(
  {
    ok: T.Literal(true),
    baseURL: T.Union([T.String(), T.Null()], { description: "Effective endpoint, without credentials" }),
    model: T.Union([T.String(), T.Null()], { description: "Effective default model" }),
    hasApiKey: T.Boolean(),
    verification: ProviderVerificationSchema,
    overriddenByEnv: T.Array(ProviderField, {
      description:
        "Fields saved but overridden by an environment variable of this launch (OPENAI_BASE_URL, OPENAI_API_KEY, AGENTD_MODEL)",
    }),
    message: T.String({ description: "A readable outcome" }),
  },
  { title: "ProviderSettings" },
);

const ENV_NAMES = { baseURL: "OPENAI_BASE_URL", apiKey: "OPENAI_API_KEY", model: "AGENTD_MODEL" } as const;

function sameOrigin(a: string | undefined, b: string): boolean {
  if (!a) return false;
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

/** PUT /settings/provider: verify, then persist to settings.json (the provider reads it on its next call). */
export function setProviderRoute({ settings, cache }: ProviderRouteDeps): AnyRoute {
  return defineRoute({
    method: "PUT",
    path: "/settings/provider",
    operationId: "setProvider",
    summary: "Verify a provider endpoint (and key), then save it as the daemon's provider (settings.json)",
    description:
      "Probes <baseURL>/models as POST /provider/verify does; 400 with the provider's reason when it fails, and " +
      "nothing is saved. Applies to the next model call, without a restart. The key is never returned or logged.",
    tags: ["settings"],
    body: ProviderSettingsRequestSchema,
    bodyLimit: 16_384,
    responses: { 200: ProviderSettingsSchema },
    handler: async (req) => {
      const s = settings();
      const url = parseEndpoint(req.body.baseURL);
      const current = s.provider;
      const given = req.body.apiKey;
      // Absent: the current key, but only for the same origin; a key is never sent to another host.
      const keepKey = given === undefined && sameOrigin(current.baseURL, url);
      const key = given !== undefined ? given || undefined : keepKey ? current.apiKey : undefined;
      const verification = await verifyProvider(url, key, req.signal);
      if (!verification.ok) {
        throw ApiError.badRequest(`Provider verification failed: ${verification.error ?? verification.probe}`, {
          probe: verification.probe,
          ...(verification.status !== undefined ? { status: verification.status } : {}),
        });
      }
      await s.update({
        provider: {
          baseURL: url,
          ...(given !== undefined ? { apiKey: given || null } : keepKey ? {} : { apiKey: null }),
          ...(req.body.model !== undefined ? { model: req.body.model } : {}),
        },
      });
      // The cached model list now describes the new endpoint (unless the environment still points elsewhere).
      const overrides = s.envOverrides();
      if (verification.models && !overrides.includes("provider.baseURL")) {
        await cache.set(verification.models.map((id) => ({ id })));
      }
      const overriddenByEnv = (["baseURL", "apiKey", "model"] as const).filter((f) =>
        overrides.includes(`provider.${f}`),
      );
      const after = s.provider;
      const note = overriddenByEnv.length
        ? `; ${overriddenByEnv.map((f) => ENV_NAMES[f]).join(", ")} in the environment still override${overriddenByEnv.length === 1 ? "s" : ""} the saved ${overriddenByEnv.join(", ")}`
        : "";
      return {
        body: {
          ok: true as const,
          baseURL: after.baseURL ? publicEndpoint(after.baseURL) : null,
          model: after.model ?? null,
          hasApiKey: Boolean(after.apiKey),
          verification,
          overriddenByEnv,
          message: `Provider saved${verification.probe === "ok" ? " and verified" : ` (reachable: ${verification.error ?? "models not listed"})`}${note}`,
        },
      };
    },
  });
}

function publicEndpoint(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}`;
  } catch {
    return "";
  }
}
