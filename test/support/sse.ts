// Moved to testing/ (the `agentd/testing` export); kept so existing imports keep working.
export * from "../../testing/sse.js";
