import {
  definePlugin,
  HostInfoToken,
  optional,
  PersonaRegistryToken,
  ProjectContextToken,
  SessionServiceToken,
} from "../../core/index.js";
import { BUILTIN_PERSONAS } from "./builtin.js";
import { catalogRoutes } from "./routes/index.js";

export { BUILTIN_PERSONAS } from "./builtin.js";

/**
 * The built-in personas and the persona/skill catalog routes. Global and project personas and skills come from
 * the project plugin (ProjectContext) when it is loaded; without it the catalog is the persona registry.
 */
export default definePlugin({
  manifest: {
    id: "personas",
    version: "1.0.0",
    description: "Built-in personas; persona and skill catalog routes",
    capabilities: ["routes", "filesystem"],
  },
  deps: {
    host: HostInfoToken,
    personas: PersonaRegistryToken,
    sessions: SessionServiceToken,
    project: optional(ProjectContextToken),
  },
  register(ctx) {
    for (const p of BUILTIN_PERSONAS) ctx.personas.add(p);
    const { deps } = ctx;
    const routes = catalogRoutes({
      registry: deps.personas,
      defaultPersona: () => deps.host.defaultPersona,
      project: () => deps.project,
      sessions: () => deps.sessions,
    });
    for (const route of routes) ctx.routes.add(route);
  },
});
