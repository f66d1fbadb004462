/**
 * The terminal client's commands, one entry point: host/main.ts imports this module (or its bundled copy,
 * `dist/clients/terminal.bundle/commands.js`, built by scripts/bundle-terminal.ts) when one of them runs.
 */
export { chatCommand } from "./chat.js";
export { runCommand } from "./run.js";
export { attachCommand, sessionsCommand } from "./sessions.js";
