import { realpathSync, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import {
  ApiError,
  type Persona,
  type ProjectContext,
  type RegistryView,
  type SessionService,
  T,
} from "../../../core/index.js";

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
export const ScopeQuery = T.Object(ScopeFields);
export const NamedQuery = T.Object({ name: T.String({ minLength: 1, maxLength: 100 }), ...ScopeFields });

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
export async function scopeOf(deps: CatalogDeps, q: { cwd?: string; sessionId?: string }): Promise<string | undefined> {
  if (q.cwd !== undefined && q.sessionId !== undefined) throw ApiError.badRequest("Give cwd or sessionId, not both");
  if (q.cwd !== undefined) return existingDirectory(q.cwd);
  if (q.sessionId !== undefined) return (await deps.sessions().require(q.sessionId)).cwd;
  return undefined;
}

export function listPersonas(deps: CatalogDeps, cwd: string | undefined): Persona[] {
  const project = deps.project();
  if (project) return project.personas(cwd);
  const def = deps.defaultPersona();
  return deps.registry
    .list()
    .sort((a, b) => (a.name === def ? -1 : b.name === def ? 1 : a.label.localeCompare(b.label)));
}
