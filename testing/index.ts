/** The test harness for agentd and its plugins (`agentd/testing`). */
export * from "./daemon.js";
export * from "./fake-provider.js";
export * from "./harness.js";
export * from "./plugin-harness.js";
export * from "./sse.js";
