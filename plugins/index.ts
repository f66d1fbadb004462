import type { Plugin } from "../core/plugin.js";
import agent from "./agent/index.js";
import commands from "./commands/index.js";
import files from "./files/index.js";
import git from "./git/index.js";
import mcp from "./mcp/index.js";
import permissions from "./permissions/index.js";
import personas from "./personas/index.js";
import project from "./project/index.js";
import providerOpenai from "./provider-openai/index.js";
import sandbox from "./sandbox/index.js";
import sessions from "./sessions/index.js";
import settings from "./settings/index.js";
import share from "./share/index.js";
import ssh from "./ssh/index.js";
import storagePostgres from "./storage-postgres/index.js";
import storageSqlite from "./storage-sqlite/index.js";
import themes from "./themes/index.js";
import toolsFs from "./tools-fs/index.js";
import toolsMemory from "./tools-memory/index.js";
import toolsShell from "./tools-shell/index.js";
import toolsWeb from "./tools-web/index.js";
import webUi from "./web-ui/index.js";
import worktrees from "./worktrees/index.js";

/** The built-in plugins, in a sensible default order (the loader still orders them by `requires`). */
export const builtinPlugins: Plugin[] = [
  storageSqlite,
  storagePostgres,
  project,
  personas,
  sessions,
  worktrees,
  providerOpenai,
  agent,
  toolsFs,
  sandbox,
  permissions,
  toolsShell,
  toolsMemory,
  toolsWeb,
  mcp,
  commands,
  files,
  git,
  settings,
  themes,
  ssh,
  share,
  webUi,
];
