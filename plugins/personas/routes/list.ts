import { defineRoute, T } from "../../../core/index.js";
import { type CatalogDeps, listPersonas, ScopeQuery, scopeOf } from "./shared.js";

const PersonaSchema = T.Object(
  {
    name: T.String(),
    label: T.String(),
    description: T.String(),
    source: T.Union([T.Literal("builtin"), T.Literal("global"), T.Literal("project"), T.Literal("plugin")]),
  },
  { title: "Persona" },
);

export function listPersonasRoute(deps: CatalogDeps) {
  return defineRoute({
    method: "GET",
    path: "/personas",
    operationId: "listPersonas",
    summary: "Personas: the default first, then by label",
    description:
      "Built-in and plugin personas plus global ones (`<home>/personas/*.md`); with `cwd` or `sessionId`, also the " +
      "project's (`.agentd/personas/*.md`) when the project is trusted. A project persona shadows a global one of " +
      "the same name, which shadows a built-in one.",
    tags: ["catalog"],
    query: ScopeQuery,
    responses: { 200: T.Array(PersonaSchema) },
    handler: async (req) => ({
      body: listPersonas(deps, await scopeOf(deps, req.query)).map(({ name, label, description, source }) => ({
        name,
        label,
        description,
        source,
      })),
    }),
  });
}
