import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { importModule } from "../../core/import-module.js";

/** The parts of the MCP SDK the client uses. */
export interface McpSdk {
  Client: typeof Client;
  StdioClientTransport: typeof StdioClientTransport;
  getDefaultEnvironment: typeof getDefaultEnvironment;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  ToolListChangedNotificationSchema: typeof ToolListChangedNotificationSchema;
  McpError: typeof McpError;
}

let loading: Promise<McpSdk> | undefined;
let loaded: McpSdk | undefined;

/** The SDK's modules the client uses, in the order {@link fromModules} takes them (vendor-mcp.cjs holds the same). */
export const MCP_SDK_MODULES = [
  "@modelcontextprotocol/sdk/client/index.js",
  "@modelcontextprotocol/sdk/client/stdio.js",
  "@modelcontextprotocol/sdk/client/streamableHttp.js",
  "@modelcontextprotocol/sdk/types.js",
] as const;

type SdkModules = [
  typeof import("@modelcontextprotocol/sdk/client/index.js"),
  typeof import("@modelcontextprotocol/sdk/client/stdio.js"),
  typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
  typeof import("@modelcontextprotocol/sdk/types.js"),
];

function fromModules([client, stdio, http, types]: SdkModules): McpSdk {
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    McpError: types.McpError,
  };
}

/**
 * The SDK (with its schema libraries, zod and Ajv, the heaviest dependency of the daemon) is loaded when the first
 * MCP server connects, not at boot: most daemons have none configured. The build bundles its modules into one file
 * beside the daemon's runtime (`dist/bundle/vendor-mcp.cjs`, an array of MCP_SDK_MODULES; scripts/bundle.ts),
 * outside the runtime: its source would otherwise stay in every daemon's memory (~0.5 MiB). The compiled modules
 * have no such file beside them and import the modules from node_modules.
 */
export function loadMcpSdk(): Promise<McpSdk> {
  loading ??= importModule<{ default: SdkModules }>(new URL("./vendor-mcp.cjs", import.meta.url).href)
    .then(
      (m) => m.default,
      (err: NodeJS.ErrnoException) => {
        if (err.code !== "ERR_MODULE_NOT_FOUND") throw err;
        return Promise.all(MCP_SDK_MODULES.map((m) => importModule(m))) as Promise<SdkModules>;
      },
    )
    .then((modules) => {
      loaded = fromModules(modules);
      return loaded;
    });
  return loading;
}

/** The SDK if it has been loaded (every MCP error comes from a loaded SDK). */
export function loadedMcpSdk(): McpSdk | undefined {
  return loaded;
}
