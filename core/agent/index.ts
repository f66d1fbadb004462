export * from "./context.js";
export * from "./dispatch.js";
export * from "./interaction.js";
export * from "./model-call.js";
export * from "./prompt.js";
export * from "./turn-manager.js";
export * from "./types.js";
