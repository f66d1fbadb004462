import { createRequire } from "node:module";

// yaml is loaded on the first frontmatter parsed, not at boot (it costs ~20-40 ms of module loading).
const require = createRequire(import.meta.url);
let yamlParse: typeof import("yaml").parse | undefined;
function parse(src: string): unknown {
  yamlParse ??= (require("yaml") as typeof import("yaml")).parse;
  return yamlParse(src);
}

export interface MarkdownDoc {
  meta: Record<string, unknown>;
  /** The text after the frontmatter. */
  body: string;
  /** Why the frontmatter was ignored, when it was. */
  problem?: string;
}

const FRONTMATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n?---[ \t]*(?:\r?\n|$)/;

/** Splits `---\nyaml\n---\nbody`. A missing or broken frontmatter leaves `meta` empty, never throws. */
export function parseMarkdown(text: string): MarkdownDoc {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const m = FRONTMATTER.exec(src);
  if (!m) return { meta: {}, body: src };
  const body = src.slice(m[0].length);
  try {
    const meta = parse(m[1] ?? "") as unknown;
    if (meta === null || meta === undefined) return { meta: {}, body };
    if (typeof meta !== "object" || Array.isArray(meta))
      return { meta: {}, body, problem: "frontmatter is not a mapping" };
    return { meta: meta as Record<string, unknown>, body };
  } catch (err) {
    return { meta: {}, body, problem: `invalid frontmatter: ${(err as Error).message.split("\n")[0]}` };
  }
}

export function metaString(meta: Record<string, unknown>, key: string): string | undefined {
  const v = meta[key];
  return typeof v === "string" && v.trim() ? v.trim() : undefined;
}

/** The first line of prose in a body, for a description the frontmatter did not give. */
export function firstLine(body: string, max = 200): string {
  for (const raw of body.split("\n")) {
    const line = raw.replace(/^#+\s*/, "").trim();
    if (line) return line.length > max ? `${line.slice(0, max - 1)}…` : line;
  }
  return "";
}
