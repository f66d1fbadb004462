import { realpathSync, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import {
  ApiError,
  defineRoute,
  type Persona,
  type ProjectContext,
  type RegistryView,
  type SessionService,
  T,
} from "../../core/index.js";

const PersonaSchema = T.Object(
  {
    name: T.String(),
    label: T.String(),
    description: T.String(),
    source: T.Union([T.Literal("builtin"), T.Literal("global"), T.Literal("project"), T.Literal("plugin")]),
  },
  { title: "Persona" },
);

const ScopeFields = {
  cwd: T.Optional(
    T.String({
      minLength: 1,
      maxLength: 4096,
      description: "Include the personas/skills of this directory's project (if trusted)",
    }),
  ),
  sessionId: T.Optional(
    T.String({ minLength: 1, maxLength: 200, description: "Same, for the working directory of this session" }),
  ),
};
const ScopeQuery = T.Object(ScopeFields);
const NamedQuery = T.Object({ name: T.String({ minLength: 1, maxLength: 100 }), ...ScopeFields });

const PersonaContentSchema = T.Object(
  {
    ok: T.Literal(true),
    name: T.String(),
    content: T.String({ description: "The system prompt, frontmatter stripped" }),
  },
  { title: "PersonaContent" },
);
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

export interface CatalogDeps {
  registry: RegistryView<Persona>;
  defaultPersona: () => string;
  project: () => ProjectContext | undefined;
  sessions: () => SessionService;
}

function existingDirectory(cwd: string): string {
  if (!isAbsolute(cwd)) throw ApiError.badRequest(`cwd must be an absolute path: ${cwd}`);
  try {
    if (!statSync(cwd).isDirectory()) throw ApiError.badRequest(`cwd is not a directory: ${cwd}`);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw ApiError.badRequest(`cwd does not exist: ${cwd}`);
  }
  return realpathSync(cwd);
}

/** The directory a catalog request is about: `cwd`, the session's cwd, or none (global resources only). */
async function scopeOf(deps: CatalogDeps, q: { cwd?: string; sessionId?: string }): Promise<string | undefined> {
  if (q.cwd !== undefined && q.sessionId !== undefined) throw ApiError.badRequest("Give cwd or sessionId, not both");
  if (q.cwd !== undefined) return existingDirectory(q.cwd);
  if (q.sessionId !== undefined) return (await deps.sessions().require(q.sessionId)).cwd;
  return undefined;
}

function listPersonas(deps: CatalogDeps, cwd: string | undefined): Persona[] {
  const project = deps.project();
  if (project) return project.personas(cwd);
  const def = deps.defaultPersona();
  return deps.registry
    .list()
    .sort((a, b) => (a.name === def ? -1 : b.name === def ? 1 : a.label.localeCompare(b.label)));
}

/** The catalog routes: personas (built-in, global, project) and skill content. */
export function catalogRoutes(deps: CatalogDeps) {
  return [
    defineRoute({
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
    }),
    defineRoute({
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
    }),
    defineRoute({
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
    }),
  ];
}
