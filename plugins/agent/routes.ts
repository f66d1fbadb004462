// The turn routes live one per file in routes/; index.ts imports them from here.
export { agentRoutes } from "./routes/index.js";
