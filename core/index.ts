/** The agentd plugin SDK and domain. Plugins import from here only. */

export { type Static, type TSchema, Type as T } from "@sinclair/typebox";
export * from "./agent/index.js";
export * from "./confined-fs.js";
export * from "./contributions.js";
export * from "./display.js";
export * from "./disposable.js";
export * from "./errors.js";
export * from "./event-log.js";
export * from "./events.js";
export * from "./files.js";
export * from "./git.js";
export * from "./logger.js";
export * from "./paths.js";
export * from "./plugin.js";
export * from "./project.js";
export * from "./reasoning.js";
export * from "./registries.js";
export * from "./registry.js";
export * from "./routes.js";
export * from "./schemas.js";
export * from "./session-types.js";
export * from "./sessions.js";
export * from "./shell.js";
export * from "./store.js";
export * from "./tokens.js";
export * from "./tools.js";
export * from "./turns.js";
