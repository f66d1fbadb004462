import { definePlugin, type SearchEngineName, type ToolDefinition } from "../../core/index.js";
import { createEditTool } from "./edit.js";
import { createGlobTool } from "./glob.js";
import { createGrepTool } from "./grep.js";
import { DEFAULT_LIMITS, type FsLimits } from "./limits.js";
import { createLsTool } from "./ls.js";
import { createReadTool } from "./read.js";
import { createWriteTool } from "./write.js";

export type { FsLimits } from "./limits.js";
export { DEFAULT_LIMITS } from "./limits.js";

export interface FsTools {
  read: ToolDefinition;
  write: ToolDefinition;
  edit: ToolDefinition;
  ls: ToolDefinition;
  glob: ToolDefinition;
  grep: ToolDefinition;
}

/**
 * The file tools; `limits` overrides the caps (tests use small ones), `engine` forces the search engine of glob and
 * grep (default: ripgrep when found, see core/search/engine.ts). Path policy: see paths.ts.
 */
export function createFsTools(limits: Partial<FsLimits> = {}, engine?: SearchEngineName): FsTools {
  const l: FsLimits = { ...DEFAULT_LIMITS, ...limits };
  return {
    read: createReadTool(l),
    write: createWriteTool(),
    edit: createEditTool(l),
    ls: createLsTool(l),
    glob: createGlobTool(l, engine),
    grep: createGrepTool(l, engine),
  };
}

export default definePlugin({
  manifest: {
    id: "tools-fs",
    version: "1.0.0",
    description: "File tools: read, write, edit, ls, glob, grep (confined to the session's working directory)",
    capabilities: ["filesystem"],
  },
  deps: {},
  register(ctx) {
    for (const tool of Object.values(createFsTools())) ctx.tools.add(tool);
  },
});
