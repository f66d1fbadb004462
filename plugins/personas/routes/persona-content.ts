import { ApiError, defineRoute, T } from "../../../core/index.js";
import { type CatalogDeps, listPersonas, NamedQuery, scopeOf } from "./shared.js";

const PersonaContentSchema = T.Object(
  {
    ok: T.Literal(true),
    name: T.String(),
    content: T.String({ description: "The system prompt, frontmatter stripped" }),
  },
  { title: "PersonaContent" },
);

export function personaContentRoute(deps: CatalogDeps) {
  return defineRoute({
    method: "GET",
    path: "/persona-content",
    operationId: "getPersonaContent",
    summary: "A persona's system prompt",
    tags: ["catalog"],
    query: NamedQuery,
    responses: { 200: PersonaContentSchema },
    errors: [404],
    handler: async (req) => {
      const p = listPersonas(deps, await scopeOf(deps, req.query)).find((x) => x.name === req.query.name);
      if (!p) throw ApiError.notFound(`Unknown persona: ${req.query.name}`);
      return { body: { ok: true as const, name: p.name, content: p.prompt } };
    },
  });
}
