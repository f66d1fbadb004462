import { createRequire } from "node:module";
import type TurndownService from "turndown";

/** turndown (with its DOM implementation) is loaded at the first HTML conversion, not at daemon boot. */
const requireCjs = createRequire(import.meta.url);
let Turndown: typeof TurndownService | undefined;
function newTurndown(options?: TurndownService.Options): TurndownService {
  Turndown ??= requireCjs("turndown") as typeof TurndownService;
  return new Turndown(options);
}

export type BodyKind = "html" | "json" | "text" | "binary" | "unknown";
export type OutputFormat = "markdown" | "text" | "html";

/** application/* types that are text a model can read. */
const TEXT_APPLICATION = new Set([
  "application/javascript",
  "application/ecmascript",
  "application/x-javascript",
  "application/xml",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/x-toml",
  "application/x-ndjson",
  "application/graphql",
  "application/sql",
  "application/x-sh",
  "application/x-httpd-php",
  "application/x-www-form-urlencoded",
  "application/markdown",
]);

/** What the Content-Type header promises; `unknown` means sniff the bytes. */
export function classifyContentType(header: string): BodyKind {
  const mime = (header.split(";")[0] ?? "").trim().toLowerCase();
  if (!mime || mime === "application/octet-stream") return "unknown";
  if (mime === "text/html" || mime === "application/xhtml+xml") return "html";
  if (mime === "application/json" || mime === "text/json" || mime.endsWith("+json")) return "json";
  if (mime.startsWith("text/")) return "text";
  if (TEXT_APPLICATION.has(mime) || mime.endsWith("+xml") || mime.endsWith("+yaml")) return "text";
  return "binary";
}

/** For bodies without a useful Content-Type: NUL bytes or invalid UTF-8 mean binary. */
export function sniffKind(body: Uint8Array): BodyKind {
  const head = body.subarray(0, 8192);
  if (head.includes(0)) return "binary";
  let text: string;
  try {
    // A cut in the middle of a multi-byte character at the 8 KiB boundary is not binary: allow a ragged end.
    text = new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: body.length > head.length });
  } catch {
    return "binary";
  }
  const start = text.trimStart().slice(0, 100).toLowerCase();
  if (start.startsWith("<!doctype html") || start.startsWith("<html")) return "html";
  if (start.startsWith("{") || start.startsWith("[")) return "json";
  return "text";
}

export function decodeBody(body: Uint8Array, contentType: string): string {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    // An unknown charset label: UTF-8 is the best guess on today's web.
    return new TextDecoder("utf-8").decode(body);
  }
}

export function extractTitle(html: string): string | undefined {
  const raw = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  const title = raw
    ?.replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, " ")
    .trim();
  return title || undefined;
}

/** Elements that are page furniture, not content. */
const NOISE = new Set([
  "TITLE",
  "SCRIPT",
  "STYLE",
  "NOSCRIPT",
  "TEMPLATE",
  "IFRAME",
  "OBJECT",
  "EMBED",
  "SVG",
  "CANVAS",
]);
const NAVIGATION = new Set(["NAV", "HEAD", "FOOTER"]);

function isNoise(node: HTMLElement): boolean {
  if (NOISE.has(node.nodeName) || NAVIGATION.has(node.nodeName)) return true;
  const role = node.getAttribute("role");
  return role === "navigation" || role === "banner" || node.getAttribute("aria-hidden") === "true";
}

function resolveUrl(href: string, base: string): string {
  try {
    return new URL(href, base).href;
  } catch {
    return href;
  }
}

function tidy(text: string): string {
  return text
    .replace(/[ \t]+$/gm, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** HTML -> markdown; links and images are made absolute so the model can follow them with another fetch. */
export function htmlToMarkdown(html: string, baseUrl: string): string {
  const service = newTurndown({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
  service.remove(isNoise);
  service.addRule("absoluteLinks", {
    filter: (node) => node.nodeName === "A" && !!node.getAttribute("href"),
    replacement: (content, node) => {
      const href = node.getAttribute("href") ?? "";
      const text = content.trim();
      if (!text) return "";
      // In-page anchors and script links lead nowhere a fetch can go.
      if (href.startsWith("#") || /^javascript:/i.test(href)) return content;
      return `[${text}](${resolveUrl(href, baseUrl)})`;
    },
  });
  service.addRule("images", {
    filter: "img",
    replacement: (_content, node) => {
      const alt = (node.getAttribute("alt") ?? "").replace(/\s+/g, " ").trim();
      const src = node.getAttribute("src") ?? "";
      // Inline data: images can be megabytes of base64 that mean nothing as text.
      if (!src || src.startsWith("data:")) return alt ? `[image: ${alt}]` : "";
      return `![${alt}](${resolveUrl(src, baseUrl)})`;
    },
  });
  addTableRules(service);
  return tidy(service.turndown(html));
}

/** Turndown's core has no tables; a flat pipe table keeps rows and columns readable (nested tables flatten). */
function addTableRules(service: TurndownService): void {
  service.addRule("tableCell", {
    filter: ["th", "td"],
    replacement: (content) => ` ${content.replace(/\s+/g, " ").trim().replace(/\|/g, "\\|")} |`,
  });
  service.addRule("tableRow", { filter: "tr", replacement: (content) => `|${content}\n` });
  service.addRule("tableSection", { filter: ["thead", "tbody", "tfoot"], replacement: (content) => content });
  service.addRule("tableCaption", { filter: "caption", replacement: (content) => `${content.trim()}\n` });
  service.addRule("table", {
    filter: "table",
    replacement: (content) => {
      const lines = content.split("\n").filter((l) => l.trim());
      const rows = lines.filter((l) => l.startsWith("|"));
      const first = rows[0];
      if (!first) return `\n\n${lines.join("\n")}\n\n`;
      const columns = first.split(/(?<!\\)\|/).length - 2;
      const separator = `|${" --- |".repeat(Math.max(columns, 1))}`;
      const captions = lines.filter((l) => !l.startsWith("|"));
      return `\n\n${[...captions, first, separator, ...rows.slice(1)].join("\n")}\n\n`;
    },
  });
}

const BLOCKS = new Set([
  "ADDRESS",
  "ARTICLE",
  "ASIDE",
  "BLOCKQUOTE",
  "BODY",
  "DD",
  "DIV",
  "DL",
  "DT",
  "FIELDSET",
  "FIGCAPTION",
  "FIGURE",
  "FORM",
  "H1",
  "H2",
  "H3",
  "H4",
  "H5",
  "H6",
  "HEADER",
  "HR",
  "HTML",
  "LI",
  "MAIN",
  "OL",
  "P",
  "PRE",
  "SECTION",
  "TABLE",
  "TR",
  "UL",
]);

/** HTML -> plain text: the same noise removal, no markdown syntax. */
export function htmlToText(html: string): string {
  const service = newTurndown();
  // Plain text must not carry markdown escapes (`1\.`, `\*`).
  service.escape = (s: string) => s;
  service.addRule("plain", {
    filter: (node) => !isNoise(node),
    replacement: (content, node) => {
      if (node.nodeName === "BR") return "\n";
      if (node.nodeName === "TD" || node.nodeName === "TH") return `${content.trim()}\t`;
      if (node.nodeName === "LI") return `\n- ${content.trim()}\n`;
      return BLOCKS.has(node.nodeName) ? `\n\n${content}\n\n` : content;
    },
  });
  service.remove(isNoise);
  return tidy(service.turndown(html));
}

/** Turns a decoded body into what the model reads, in the requested format. */
export function renderBody(
  kind: Exclude<BodyKind, "binary" | "unknown">,
  text: string,
  format: OutputFormat,
  url: string,
) {
  if (kind === "html") {
    if (format === "html") return text;
    return format === "text" ? htmlToText(text) : htmlToMarkdown(text, url);
  }
  if (kind === "json") {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // A body cut at the size cap (or simply invalid JSON) is still worth showing as it is.
      return text;
    }
  }
  return text;
}
