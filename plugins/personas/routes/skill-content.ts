import { ApiError, defineRoute, T } from "../../../core/index.js";
import { type CatalogDeps, NamedQuery, scopeOf } from "./shared.js";

const SkillContentSchema = T.Object(
  {
    ok: T.Literal(true),
    name: T.String(),
    description: T.String(),
    source: T.Union([T.Literal("global"), T.Literal("project")]),
    content: T.String({ description: "The SKILL.md body, frontmatter stripped" }),
  },
  { title: "SkillContent" },
);

export function skillContentRoute(deps: CatalogDeps) {
  return defineRoute({
    method: "GET",
    path: "/skill-content",
    operationId: "getSkillContent",
    summary: "A skill's instructions (SKILL.md)",
    description:
      "Global skills (`<home>/skills/<name>/SKILL.md`); with `cwd` or `sessionId`, also the trusted project's " +
      "(`.agentd/skills/<name>/SKILL.md`), which shadow global ones of the same name.",
    tags: ["catalog"],
    query: NamedQuery,
    responses: { 200: SkillContentSchema },
    errors: [404],
    handler: async (req) => {
      const cwd = await scopeOf(deps, req.query);
      const s = deps.project()?.skill(req.query.name, cwd);
      if (!s) throw ApiError.notFound(`Unknown skill: ${req.query.name}`);
      return {
        body: { ok: true as const, name: s.name, description: s.description, source: s.source, content: s.content },
      };
    },
  });
}
