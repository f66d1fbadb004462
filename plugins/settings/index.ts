import {
  type DaemonSettings,
  DocumentStoreToken,
  definePlugin,
  defineRoute,
  RouteRegistryToken,
  SessionIdParams,
  SessionServiceToken,
  type SettingSource,
  SettingsToken,
  type Static,
  T,
  ThemeRegistryToken,
  ToolRegistryToken,
} from "../../core/index.js";
import { DIALECTS, type Dialect, detectDialect, reasoningOptionsFor } from "../../core/reasoning.js";
import { AppearanceStore } from "./appearance.js";

export {
  DIALECTS,
  type Dialect,
  detectDialect,
  type ReasoningOptions,
  reasoningOptionsFor,
} from "../../core/reasoning.js";
export { type Appearance, DEFAULT_APPEARANCE } from "./appearance.js";

export const SettingsOptionsSchema = T.Object(
  {
    theme: T.Optional(T.String({ minLength: 1, description: 'Theme id /config suggests to clients (default "dark")' })),
    reasoningFormat: T.Optional(
      T.Unsafe<Dialect | "auto">({
        type: "string",
        enum: ["auto", ...DIALECTS],
        description: "Reasoning dialect of the provider; auto (default) detects it from the base URL host",
      }),
    ),
  },
  { additionalProperties: false },
);

const AppearanceSchema = T.Object({ showReasoning: T.Boolean() }, { title: "Appearance" });
const AppearanceUpdate = T.Object(
  { showReasoning: T.Boolean({ description: "Show the model's reasoning in transcripts" }) },
  { title: "AppearanceUpdate", additionalProperties: false },
);

const ReasoningOptionsSchema = T.Object(
  {
    options: T.Array(T.Object({ value: T.String(), label: T.String() }), {
      description: "Choices for the model, in order; empty when the model has no reasoning control",
    }),
    model: T.String(),
    dialect: T.String({ description: `How the endpoint spells reasoning: ${DIALECTS.join(", ")}` }),
    kind: T.Union([T.Literal("effort"), T.Literal("toggle"), T.Literal("none")]),
    default: T.Union([T.String(), T.Null()]),
    current: T.Optional(T.String({ description: "The session's chosen value, when one was set" })),
  },
  { title: "ReasoningOptions" },
);

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

/** Each loaded plugin's appearance settings, read at its start. */
const appearances = new WeakMap<object, AppearanceStore>();

/** Client-facing configuration, appearance settings and reasoning options. */
export default definePlugin({
  manifest: {
    id: "settings",
    version: "1.0.0",
    description: "GET /config, appearance settings, reasoning options per model and provider dialect",
    requires: ["session-store"],
    capabilities: ["routes", "secrets", "storage", "filesystem"],
    configSchema: SettingsOptionsSchema,
  },
  deps: {
    settings: SettingsToken,
    documents: DocumentStoreToken,
    sessions: SessionServiceToken,
    themes: ThemeRegistryToken,
    tools: ToolRegistryToken,
    routes: RouteRegistryToken,
  },
  register(ctx) {
    const options = ctx.options;
    const settings = (): DaemonSettings => ctx.deps.settings;
    // Read at start: the documents may be kept by the storage plugin.
    const appearance = new AppearanceStore(() => ctx.deps.documents, ctx.log);
    appearances.set(ctx, appearance);
    ctx.onDispose(() => appearance.close());
    const dialect = (): Dialect =>
      !options.reasoningFormat || options.reasoningFormat === "auto"
        ? detectDialect(settings().provider.baseURL)
        : options.reasoningFormat;
    const defaultModel = () => settings().provider.model ?? "default";

    const theme = (): string | null => {
      const themes = ctx.deps.themes;
      const wanted = settings().theme ?? options.theme ?? "dark";
      if (themes.has(wanted)) return wanted;
      return themes.list()[0]?.id ?? null;
    };

    const features = () => {
      const { tools, routes } = ctx.deps;
      return {
        memory: tools.has("memory"),
        web: tools.has("web_fetch") || tools.has("web_search"),
        shell: tools.has("bash"),
        ssh: tools.has("ssh"),
        subagents: tools.has("task"),
        mcp: routes.has("GET /mcp/servers"),
        share: routes.has("GET /shared/:token"),
      };
    };

    const tags = ["settings"];
    const routes = [
      defineRoute({
        method: "GET",
        path: "/config",
        operationId: "getConfig",
        summary: "Safe client configuration: defaults, version and features (never keys or tokens)",
        tags,
        responses: { 200: ClientConfigSchema },
        handler: () => {
          const s = settings();
          const f = features();
          return {
            body: {
              version: s.version,
              apiVersion: "1.0.0",
              model: defaultModel(),
              persona: s.defaultPersona,
              quickSessionPersona: s.defaultPersona,
              cwd: s.defaultCwd,
              theme: theme(),
              baseURL: publicBaseUrl(s.provider.baseURL),
              providerConfigured: Boolean(s.provider.baseURL || s.provider.apiKey),
              hasApiKey: Boolean(s.provider.apiKey),
              reasoningDialect: dialect(),
              memoryEnabled: f.memory,
              showReasoning: appearance.get().showReasoning,
              permissionMode: s.permissionMode,
              maxTurnIterations: s.maxTurnIterations,
              reasoning: s.reasoning ?? null,
              settings: publicLayers(s),
              features: f,
            },
          };
        },
      }),
      defineRoute({
        method: "GET",
        path: "/settings/appearance",
        operationId: "getAppearance",
        summary: "Appearance settings shared by every client",
        tags,
        responses: { 200: AppearanceSchema },
        handler: () => ({ body: appearance.get() }),
      }),
      defineRoute({
        method: "POST",
        path: "/settings/appearance",
        operationId: "setAppearance",
        summary: "Change appearance settings (persisted in the daemon home)",
        tags,
        body: AppearanceUpdate,
        bodyLimit: 4096,
        responses: {
          200: T.Object({ ok: T.Literal(true), showReasoning: T.Boolean() }, { title: "AppearanceUpdated" }),
        },
        handler: async ({ body }) => ({
          body: { ok: true as const, ...(await appearance.set({ showReasoning: body.showReasoning })) },
        }),
      }),
      defineRoute({
        method: "GET",
        path: "/settings/reasoning-options",
        operationId: "getReasoningOptions",
        summary: "Reasoning choices for the default model on the configured provider",
        tags,
        responses: { 200: ReasoningOptionsSchema },
        handler: () => ({ body: reasoningOptionsFor(defaultModel(), dialect()) }),
      }),
      defineRoute({
        method: "GET",
        path: "/sessions/:id/reasoning-options",
        operationId: "getSessionReasoningOptions",
        summary: "Reasoning choices for the session's model, with its current choice",
        tags: ["sessions"],
        params: SessionIdParams,
        responses: { 200: ReasoningOptionsSchema },
        handler: async ({ params }) => {
          const rec = await ctx.deps.sessions.require(params.id);
          const body: Static<typeof ReasoningOptionsSchema> = reasoningOptionsFor(rec.model, dialect());
          const current = rec.meta.reasoningEffort;
          if (typeof current === "string" && current) body.current = current;
          return { body };
        },
      }),
    ];
    for (const r of routes) ctx.routes.add(r);
  },
  async start(ctx) {
    await appearances.get(ctx)?.load();
  },
});
