/**
 * The `agentd` package export. tsc compiles this file to a plain re-export of the SDK (`core/sdk.ts`); `npm run build` then
 * replaces the compiled file with the bundle's SDK entry (scripts/bundle.ts), which shares its chunks with the
 * bundled daemon (`bundle/daemon.ts`): a plugin that imports `agentd` gets the very modules the daemon runs.
 */
export * from "../core/sdk.js";
