import {
  type DaemonSettings,
  DocumentStoreToken,
  definePlugin,
  RouteRegistryToken,
  SessionServiceToken,
  SettingsToken,
  T,
  ThemeRegistryToken,
  ToolRegistryToken,
} from "../../core/index.js";
import { DIALECTS, type Dialect, detectDialect } from "../../core/reasoning.js";
import { AppearanceStore } from "./appearance.js";
import { settingsRoutes } from "./routes/index.js";

export {
  DIALECTS,
  type Dialect,
  detectDialect,
  type ReasoningOptions,
  reasoningOptionsFor,
} from "../../core/reasoning.js";
export { type Appearance, DEFAULT_APPEARANCE } from "./appearance.js";
export { publicBaseUrl } from "./routes/index.js";

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

    const routes = settingsRoutes({
      settings,
      sessions: () => ctx.deps.sessions,
      appearance,
      dialect,
      defaultModel,
      theme,
      features,
    });
    for (const r of routes) ctx.routes.add(r);
  },
  async start(ctx) {
    await appearances.get(ctx)?.load();
  },
});
