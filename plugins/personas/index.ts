import {
  definePlugin,
  HostInfoToken,
  PersonaRegistryToken,
  ProjectContextToken,
  SessionServiceToken,
} from "../../core/index.js";
import { BUILTIN_PERSONAS } from "./builtin.js";
import { catalogRoutes } from "./routes.js";

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
  register(ctx) {
    for (const p of BUILTIN_PERSONAS) ctx.personas.add(p);
    const settings = ctx.services.get(HostInfoToken);
    const routes = catalogRoutes({
      registry: ctx.services.get(PersonaRegistryToken),
      defaultPersona: () => settings.defaultPersona,
      project: () => ctx.services.tryGet(ProjectContextToken),
      sessions: () => ctx.services.get(SessionServiceToken),
    });
    for (const route of routes) ctx.routes.add(route);
  },
});
