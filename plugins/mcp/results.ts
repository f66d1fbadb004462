import type { McpError } from "@modelcontextprotocol/sdk/types.js";
import { errorMessage, type ToolImage, type ToolResult, toolError } from "../../core/index.js";
import { loadedMcpSdk } from "./sdk.js";

/** What the model is shown of one result; MCP servers can return arbitrarily large payloads. */
const MAX_CONTENT_CHARS = 100_000;

/**
 * MCP inputSchemas are JSON Schema objects, often with a `$schema` of a draft the tool-argument validator may not
 * know; that key carries nothing for validation of plain objects, so it is dropped. Providers also want
 * `type: "object"` with `properties`.
 */
export function normaliseInputSchema(schema: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> =
    typeof schema === "object" && schema !== null && !Array.isArray(schema)
      ? structuredClone(schema as Record<string, unknown>)
      : {};
  delete copy.$schema;
  copy.type = "object";
  if (typeof copy.properties !== "object" || copy.properties === null) copy.properties = {};
  return copy;
}

interface ContentPart {
  type: string;
  [k: string]: unknown;
}

function str(x: unknown): string {
  return typeof x === "string" ? x : "";
}

/** Approximate decoded size of base64 data, for summaries. */
function base64Bytes(data: string): number {
  return Math.floor((data.length * 3) / 4);
}

function summarise(part: ContentPart, images: ToolImage[]): string {
  switch (part.type) {
    case "text":
      return str(part.text);
    case "image": {
      const mime = str(part.mimeType) || "image/png";
      images.push({ dataUrl: `data:${mime};base64,${str(part.data)}` });
      return `[image ${mime}]`;
    }
    case "audio":
      return `[audio ${str(part.mimeType) || "unknown type"}, ${base64Bytes(str(part.data))} bytes]`;
    case "resource": {
      const res = (part.resource ?? {}) as Record<string, unknown>;
      if (typeof res.text === "string") return `[resource ${str(res.uri)}]\n${res.text}`;
      return `[resource ${str(res.uri)} (${str(res.mimeType) || "binary"}, ${base64Bytes(str(res.blob))} bytes)]`;
    }
    case "resource_link":
      return `[resource link ${str(part.uri)}${part.name ? ` "${str(part.name)}"` : ""}]`;
    default:
      return `[${part.type} content]`;
  }
}

function cap(text: string): string {
  if (text.length <= MAX_CONTENT_CHARS) return text;
  return `${text.slice(0, MAX_CONTENT_CHARS)}\n[truncated: ${text.length - MAX_CONTENT_CHARS} more characters]`;
}

/** Maps a `tools/call` result (current or the legacy `toolResult` shape) to an agentd tool result. */
export function mapCallResult(result: Record<string, unknown>, meta: { server: string; tool: string }): ToolResult {
  const images: ToolImage[] = [];
  const parts = Array.isArray(result.content) ? (result.content as ContentPart[]) : [];
  let text = parts
    .map((p) => summarise(p, images))
    .filter((s) => s.length > 0)
    .join("\n");
  if (!text && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  if (!text && "toolResult" in result) text = JSON.stringify(result.toolResult);
  const out: ToolResult = { content: cap(text), meta: { server: meta.server, tool: meta.tool } };
  if (images.length) out.images = images;
  if (result.isError === true) {
    const failed = toolError(
      "execution_failed",
      out.content || `The MCP tool ${meta.tool} on server ${meta.server} reported an error without details.`,
      "Read the error above; fix the arguments or take a different approach.",
      false,
      out.meta,
    );
    return images.length ? { ...failed, images } : failed;
  }
  if (!out.content) {
    out.content = "(no output)";
  }
  return out;
}

export type CallFailure =
  /** The connection is gone or unusable: report unavailable and reconnect. */
  | { kind: "disconnected"; result: ToolResult }
  /** The server answered with an error, or the call timed out / was aborted: the connection is fine. */
  | { kind: "call"; result: ToolResult };

/** Classifies an exception thrown by `client.callTool`. */
export function classifyCallError(
  err: unknown,
  ctx: { server: string; tool: string; aborted: boolean; timeoutMs: number; redact: (s: string) => string },
): CallFailure {
  const meta = { server: ctx.server, tool: ctx.tool };
  const msg = ctx.redact(errorMessage(err));
  if (ctx.aborted) {
    return {
      kind: "call",
      result: toolError(
        "aborted",
        `The call to ${ctx.tool} on MCP server ${ctx.server} was aborted.`,
        "The user aborted the call; do not retry unless asked.",
        false,
        meta,
      ),
    };
  }
  if (isMcpError(err)) {
    if (err.code === RPC_REQUEST_TIMEOUT) {
      return {
        kind: "call",
        result: toolError(
          "timeout",
          `The call to ${ctx.tool} on MCP server ${ctx.server} timed out after ${ctx.timeoutMs} ms.`,
          "Retry with a smaller request, or try again later.",
          true,
          meta,
        ),
      };
    }
    if (err.code === RPC_CONNECTION_CLOSED) {
      return {
        kind: "disconnected",
        result: unavailable(ctx.server, `the connection closed during the call (${msg})`),
      };
    }
    const invalid = err.code === RPC_INVALID_PARAMS;
    return {
      kind: "call",
      result: toolError(
        invalid ? "invalid_arguments" : "execution_failed",
        `MCP server ${ctx.server} rejected the call to ${ctx.tool}: ${msg}`,
        invalid ? "Fix the arguments to match the tool's schema." : "Read the error; try different arguments.",
        false,
        meta,
      ),
    };
  }
  // Anything else is the transport failing (process gone, HTTP error, network down).
  return { kind: "disconnected", result: unavailable(ctx.server, msg) };
}

/* The protocol's error codes (the SDK's ErrorCode), so this module does not load the SDK. */
const RPC_CONNECTION_CLOSED = -32000;
const RPC_REQUEST_TIMEOUT = -32001;
const RPC_INVALID_PARAMS = -32602;

/** An McpError of the (lazily loaded) SDK, recognised by class when loaded, else by its name. */
function isMcpError(err: unknown): err is McpError {
  const sdk = loadedMcpSdk();
  if (sdk && err instanceof sdk.McpError) return true;
  return err instanceof Error && err.name === "McpError" && typeof (err as { code?: unknown }).code === "number";
}

export function unavailable(server: string, reason: string): ToolResult {
  return toolError(
    "unavailable",
    `MCP server ${server} is unavailable: ${reason}`,
    "The server is reconnecting or down; try again later or continue without this tool.",
    true,
    { server },
  );
}
