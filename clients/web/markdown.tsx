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

/**
 * Final messages' HTML, highlighted once it is: the virtualised transcript mounts a message again each time it
 * scrolls back into view, and parsing, sanitising and highlighting it again would cost every frame of a scroll.
 */
const rendered = new Map<string, { html: string; highlighted: boolean }>();
const RENDERED_MAX = 600;

function remember(text: string, html: string, highlighted: boolean): void {
  rendered.delete(text);
  rendered.set(text, { html, highlighted });
  if (rendered.size > RENDERED_MAX) rendered.delete(rendered.keys().next().value as string);
}

/** Rendered Markdown. `streaming` skips highlighting and copy buttons (they come once the text is final). */
export function Markdown({ text, streaming }: { text: string; streaming?: boolean }) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (streaming) {
      el.innerHTML = markdownToHtml(text);
      return;
    }
    const known = rendered.get(text);
    el.innerHTML = known?.html ?? markdownToHtml(text);
    if (!known) remember(text, el.innerHTML, false);
    addCopyButtons(el);
    // Only blocks that name their language: guessing colours plain output in random ones.
    const blocks = el.querySelectorAll<HTMLElement>('pre code[class*="language-"]');
    if (blocks.length === 0 || known?.highlighted) return;
    // Colours wait for an idle moment: a fast scroll through unseen messages must not pay for them every frame.
    let cancelled = false;
    const idle = window.requestIdleCallback ?? ((fn: () => void) => setTimeout(fn, 1));
    idle(() => {
      if (cancelled) return;
      void loadHighlighter().then((h) => {
        if (cancelled) return;
        for (const b of blocks) h(b);
        const copy = el.cloneNode(true) as HTMLElement;
        for (const b of copy.querySelectorAll("button.copy")) b.remove();
        remember(text, copy.innerHTML, true);
      });
    });
    return () => {
      cancelled = true;
    };
  }, [text, streaming]);
  return <div class="md" ref={ref} />;
}
