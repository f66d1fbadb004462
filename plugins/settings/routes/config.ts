import { type DaemonSettings, defineRoute, type SettingSource, T } from "../../../core/index.js";
import { type SettingsRouteDeps, tags } from "./shared.js";

const LayeredValueSchema = T.Object(
  {
    value: T.Optional(T.Unknown({ description: "Absent when unset, and always for the API key" })),
    source: T.Union([T.Literal("default"), T.Literal("config"), T.Literal("settings"), T.Literal("env")], {
      description: "default < config (config file) < settings (settings.json) < env (environment variable)",
    }),
  },
  { title: "LayeredSetting" },
);

const ClientConfigSchema = T.Object(
  {
    version: T.String({ description: "Daemon version" }),
    apiVersion: T.String(),
    model: T.String({ description: "Default model of new sessions" }),
    persona: T.String({ description: "Default persona of new sessions" }),
    quickSessionPersona: T.String(),
    cwd: T.String({ description: "Default working directory of new sessions" }),
    theme: T.Union([T.String(), T.Null()], { description: "Suggested theme id" }),
    baseURL: T.Union([T.String(), T.Null()], {
      description: "Provider endpoint without credentials, query or fragment; null when unset",
    }),
    providerConfigured: T.Boolean(),
    hasApiKey: T.Boolean({ description: "Whether a provider API key is set (the key itself is never exposed)" }),
    reasoningDialect: T.String(),
    memoryEnabled: T.Boolean(),
    showReasoning: T.Boolean(),
    permissionMode: T.Union([T.Literal("default"), T.Literal("bypass")], {
      description: "Permission mode of new sessions",
    }),
    maxTurnIterations: T.Integer({ description: "Default per-turn model-call cap" }),
    reasoning: T.Union([T.String(), T.Null()], {
      description: "Reasoning level of new sessions (null: model default)",
    }),
    // additionalProperties (not T.Record's patternProperties): generated clients get the value type.
    settings: T.Object(
      {},
      {
        additionalProperties: LayeredValueSchema,
        description:
          "Each layered key (provider.baseURL, provider.apiKey, provider.model, defaultPersona, maxTurnIterations, " +
          "permissionMode, theme, reasoning) with its effective value and where it came from; provider.apiKey has " +
          "no value, only its source (see hasApiKey)",
      },
    ),
    features: T.Object({
      memory: T.Boolean(),
      web: T.Boolean(),
      shell: T.Boolean(),
      ssh: T.Boolean(),
      subagents: T.Boolean(),
      mcp: T.Boolean(),
      share: T.Boolean(),
    }),
  },
  { title: "ClientConfig" },
);

/** An endpoint URL without what may carry a secret (user:password@, ?key=, #...). */
export function publicBaseUrl(raw: string | undefined): string | null {
  if (!raw) return null;
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}`;
  } catch {
    return null;
  }
}

/** The layered settings with anything that could carry a secret left out (the key; credentials in the URL). */
function publicLayers(s: DaemonSettings): Record<string, { value?: unknown; source: SettingSource }> {
  const layers: Record<string, { value?: unknown; source: SettingSource }> = { ...s.layers() };
  const base = layers["provider.baseURL"];
  if (base?.value !== undefined) {
    layers["provider.baseURL"] = { source: base.source, value: publicBaseUrl(String(base.value)) };
  }
  layers["provider.apiKey"] = { source: layers["provider.apiKey"]?.source ?? "default" };
  return layers;
}

export function configRoute(deps: SettingsRouteDeps) {
  return defineRoute({
    method: "GET",
    path: "/config",
    operationId: "getConfig",
    summary: "Safe client configuration: defaults, version and features (never keys or tokens)",
    tags,
    responses: { 200: ClientConfigSchema },
    handler: () => {
      const s = deps.settings();
      const f = deps.features();
      return {
        body: {
          version: s.version,
          apiVersion: "1.0.0",
          model: deps.defaultModel(),
          persona: s.defaultPersona,
          quickSessionPersona: s.defaultPersona,
          cwd: s.defaultCwd,
          theme: deps.theme(),
          baseURL: publicBaseUrl(s.provider.baseURL),
          providerConfigured: Boolean(s.provider.baseURL || s.provider.apiKey),
          hasApiKey: Boolean(s.provider.apiKey),
          reasoningDialect: deps.dialect(),
          memoryEnabled: f.memory,
          showReasoning: deps.appearance.get().showReasoning,
          permissionMode: s.permissionMode,
          maxTurnIterations: s.maxTurnIterations,
          reasoning: s.reasoning ?? null,
          settings: publicLayers(s),
          features: f,
        },
      };
    },
  });
}
