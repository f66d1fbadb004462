/**
 * The agent's Markdown on a shared page, rendered as the app renders it (GFM: headings, lists, tables, code) and safe
 * without a DOM sanitiser: raw HTML is shown as text, links only to http(s) and mailto, images as their text. The
 * page's CSP is the second line (no script but its own, images only inline data).
 */
import { escapeHtml } from "./page.js";

type Render = (text: string) => string;
let loaded: Promise<Render> | undefined;

const SAFE_LINK = /^(https?:|mailto:)/i;

/** Loaded on the first shared page (marked stays off the daemon's start). */
export function shareMarkdown(): Promise<Render> {
  loaded ??= import("marked").then(({ Marked }) => {
    // marked's defaults: GFM on, single line breaks kept as spaces, synchronous.
    const marked = new Marked().use({
      renderer: {
        html: ({ text }) => escapeHtml(text),
        link({ href, tokens }) {
          const inner = this.parser.parseInline(tokens);
          return SAFE_LINK.test(href)
            ? `<a href="${escapeHtml(href)}" rel="noopener noreferrer nofollow">${inner}</a>`
            : inner;
        },
        image: ({ text }) => (text ? `[${escapeHtml(text)}]` : "[image]"),
      },
    });
    return (text: string) => marked.parse(text) as string;
  });
  return loaded;
}
