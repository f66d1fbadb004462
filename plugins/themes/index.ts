import { definePlugin, defineRoute, type Static, T, type Theme, ThemeRegistryToken } from "../../core/index.js";
import { BUILTIN_THEMES, THEME_COLOR_KEYS } from "./themes.js";

export { BUILTIN_THEMES, type BuiltinTheme, DEFAULT_THEME_ID, THEME_COLOR_KEYS, type ThemeColors } from "./themes.js";

const Gradient = T.Object({ from: T.String(), to: T.String() }, { additionalProperties: false });

export const ThemeSchema = T.Object(
  {
    id: T.String(),
    label: T.String(),
    description: T.String(),
    appearance: T.Optional(T.Union([T.Literal("dark"), T.Literal("light")])),
    colors: T.Record(T.String(), T.Union([T.String(), Gradient]), {
      description: `Colour map; built-in themes set every key: ${THEME_COLOR_KEYS.join(", ")}`,
    }),
  },
  { title: "Theme" },
);

/** What GET /themes shows of a theme (another plugin's theme may carry extra fields of its own). */
function toWire(t: Theme): Static<typeof ThemeSchema> {
  const out: Static<typeof ThemeSchema> = { id: t.id, label: t.label, description: t.description, colors: t.colors };
  const appearance = (t as { appearance?: unknown }).appearance;
  if (appearance === "dark" || appearance === "light") out.appearance = appearance;
  return out;
}

/** The built-in colour themes and the theme catalog route (which also lists themes other plugins contribute). */
export default definePlugin({
  manifest: {
    id: "themes",
    version: "1.0.0",
    description: "Built-in colour themes (dark, light, solarized, high contrast, ...) and GET /themes",
    capabilities: ["routes"],
  },
  deps: {
    themes: ThemeRegistryToken,
  },
  register(ctx) {
    for (const theme of BUILTIN_THEMES) ctx.themes.add(theme);
    ctx.routes.add(
      defineRoute({
        method: "GET",
        path: "/themes",
        operationId: "listThemes",
        summary: "Colour themes for clients, built-in first",
        tags: ["catalog"],
        responses: { 200: T.Array(ThemeSchema) },
        handler: () => ({ body: ctx.deps.themes.list().map(toWire) }),
      }),
    );
  },
});
