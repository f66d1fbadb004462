/**
 * Model output as Markdown: parsed by marked, then sanitized by DOMPurify (model text can never run script or
 * load remote content), code highlighted by highlight.js, which is loaded on first use so it stays off the first page.
 */
import DOMPurify from "dompurify";
import { Marked } from "marked";
import { useLayoutEffect, useRef } from "preact/hooks";

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);

/** Raw HTML in model output is shown as text, not interpreted; DOMPurify is the second line behind that. */
const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    html: ({ text }) => escapeHtml(text),
  },
});

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

export function markdownToHtml(text: string): string {
  const raw = marked.parse(text) as string;
  return DOMPurify.sanitize(raw, { FORBID_TAGS: ["style", "form", "input", "button"], FORBID_ATTR: ["style"] });
}

type Highlighter = (el: HTMLElement) => void;
let highlighter: Promise<Highlighter> | undefined;
function loadHighlighter(): Promise<Highlighter> {
  highlighter ??= import("./highlight.js").then((m) => m.highlightElement);
  return highlighter;
}

/** A "Copy" button on each code block (added after sanitising: model text never makes buttons). */
function addCopyButtons(el: HTMLElement): void {
  for (const pre of el.querySelectorAll<HTMLPreElement>("pre")) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy code");
    button.addEventListener("click", () => {
      const code = pre.querySelector("code")?.textContent ?? pre.textContent ?? "";
      void navigator.clipboard?.writeText(code).then(
        () => {
          button.textContent = "Copied";
          setTimeout(() => (button.textContent = "Copy"), 1500);
        },
        () => (button.textContent = "Copy failed"),
      );
    });
    pre.append(button);
  }
}

/** Rendered Markdown. `streaming` skips highlighting and copy buttons (they come once the text is final). */
export function Markdown({ text, streaming }: { text: string; streaming?: boolean }) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.innerHTML = markdownToHtml(text);
    if (streaming) return;
    addCopyButtons(el);
    // Only blocks that name their language: guessing colours plain output in random ones.
    const blocks = el.querySelectorAll<HTMLElement>('pre code[class*="language-"]');
    if (blocks.length)
      void loadHighlighter().then((h) => {
        for (const b of blocks) h(b);
      });
  }, [text, streaming]);
  return <div class="md" ref={ref} />;
}
