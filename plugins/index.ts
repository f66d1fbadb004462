import type { Plugin } from "../core/plugin.js";
import personas from "./personas/index.js";

/** The built-in plugins, in a sensible default order (the loader still orders them by `requires`). */
export const builtinPlugins: Plugin[] = [personas];
