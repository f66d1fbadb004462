/** The `agentd/testing` package export: like `bundle/sdk.ts`, a re-export that `npm run build` bundles in place. */
export * from "../testing/index.js";
