import {
  defineTool,
  errorMessage,
  type Static,
  T,
  type ToolDefinition,
  ToolFailure,
  type ToolResult,
  toolError,
} from "../../core/index.js";
import { classifyContentType, decodeBody, extractTitle, renderBody, sniffKind } from "./convert.js";
import { binaryFailure, type FetchLimits, fetchPage, parseHttpUrl } from "./http.js";
import { capText, stringEnum } from "./results.js";

export const DEFAULT_FETCH_LIMITS: FetchLimits = {
  timeoutMs: 30_000,
  maxBytes: 5 * 1024 * 1024,
  maxRedirects: 5,
  blockPrivateNetworks: false,
};
/** cast's default; enough for a documentation page without flooding the context. */
export const DEFAULT_MAX_CHARS = 12_000;
export const MAX_CHARS = 50_000;

export const WebFetchParams = T.Object({
  url: T.String({ minLength: 1, maxLength: 8192, description: "The http(s) URL to fetch" }),
  format: T.Optional(
    stringEnum(["markdown", "text", "html"], {
      description: "How HTML pages are returned (default markdown). JSON and plain text are returned as they are.",
    }),
  ),
  maxChars: T.Optional(
    T.Integer({
      minimum: 100,
      maximum: MAX_CHARS,
      description: `Characters of content returned at most (default ${DEFAULT_MAX_CHARS})`,
    }),
  ),
});
export type WebFetchArgs = Static<typeof WebFetchParams>;

function sizeLabel(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`
    : `${Math.round(bytes / 1024)} KiB`;
}

export function createWebFetchTool(limits: Partial<FetchLimits> = {}): ToolDefinition<WebFetchArgs> {
  const effective: FetchLimits = { ...DEFAULT_FETCH_LIMITS, ...limits };
  return defineTool({
    name: "web_fetch",
    description:
      "Fetch a web page (http/https) and return its content: HTML as markdown (or text/html), JSON pretty-printed, " +
      "text as is. Follows up to 5 redirects. Binary files (images, PDFs, archives) are refused.",
    parameters: WebFetchParams,
    readOnly: true,
    async execute(args, ctx): Promise<ToolResult> {
      try {
        return await fetchAndRender(args, effective, ctx.signal);
      } catch (err) {
        if (err instanceof ToolFailure) return err.toResult({ url: args.url });
        return toolError(
          "execution_failed",
          `web_fetch failed: ${errorMessage(err)}`,
          "Try another URL or format.",
          false,
          { url: args.url },
        );
      }
    },
  });
}

async function fetchAndRender(args: WebFetchArgs, limits: FetchLimits, signal: AbortSignal): Promise<ToolResult> {
  const format = args.format ?? "markdown";
  const maxChars = Math.min(Math.max(args.maxChars ?? DEFAULT_MAX_CHARS, 1), MAX_CHARS);
  const page = await fetchPage(parseHttpUrl(args.url), limits, signal);

  let kind = classifyContentType(page.contentType);
  if (kind === "unknown") kind = sniffKind(page.body);
  if (kind === "binary" || kind === "unknown") throw binaryFailure(page.contentType, page.url);

  const decoded = decodeBody(page.body, page.contentType);
  const title = kind === "html" ? extractTitle(decoded) : undefined;
  const rendered = renderBody(kind, decoded, format, page.url).trim();
  const more =
    maxChars < MAX_CHARS
      ? `Call web_fetch again with a larger maxChars (up to ${MAX_CHARS}) to see more.`
      : "The rest is not shown.";
  const body = capText(rendered || "(The page has no readable text.)", maxChars, more);

  const lines: string[] = [];
  if (title) lines.push(`# ${title}`);
  lines.push(`URL: ${page.url}`);
  if (page.redirectedFrom.length > 0) lines.push(`Redirected from: ${page.redirectedFrom.join(" -> ")}`);
  if (page.contentType) lines.push(`Content-Type: ${page.contentType}`);
  lines.push("", body.text);
  if (page.truncated) {
    const cap = sizeLabel(limits.maxBytes);
    lines.push("", `[Note: the response is larger than ${cap}; only its first ${cap} were read.]`);
  }
  return {
    content: lines.join("\n"),
    meta: {
      url: page.url,
      status: page.status,
      contentType: page.contentType,
      bytes: page.body.byteLength,
      bodyTruncated: page.truncated,
      contentTruncated: body.truncated,
      redirects: page.redirectedFrom.length,
    },
  };
}
