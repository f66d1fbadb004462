/**
 * Markdown for a terminal: marked + marked-terminal (headings, lists, tables, highlighted code blocks), wrapped to
 * the width. The renderer (and its highlighter) loads in the background after the first screen, so start-up does
 * not wait for it; until then text shows as written.
 */
type Render = (text: string, width: number) => string;

let render: Render | undefined;
let loading: Promise<void> | undefined;

export function loadMarkdown(): Promise<void> {
  loading ??= (async () => {
    const [{ Marked }, { markedTerminal }] = await Promise.all([import("marked"), import("marked-terminal")]);
    const byWidth = new Map<number, InstanceType<typeof Marked>>();
    render = (text, width) => {
      let m = byWidth.get(width);
      if (!m) {
        // biome-ignore lint/suspicious/noExplicitAny: marked-terminal's extension type predates marked 18's
        m = new Marked(markedTerminal({ width, reflowText: true, tab: 2, emoji: false }) as any);
        byWidth.set(width, m);
      }
      return (m.parse(text, { async: false }) as string).replace(/\n+$/, "");
    };
  })();
  return loading;
}

export function markdownReady(): boolean {
  return render !== undefined;
}

/** The text rendered for a terminal `width` columns wide (as written while the renderer loads or on failure). */
export function renderMarkdown(text: string, width: number): string {
  if (!render) return text;
  try {
    return render(text, Math.max(20, width));
  } catch {
    return text;
  }
}

/**
 * Splits streaming text into the part made of finished blocks (up to the last blank line outside a code fence),
 * which can be printed for good, and the part still being written.
 */
export function splitFinished(text: string): [done: string, rest: string] {
  let inFence = false;
  let cut = -1;
  let pos = 0;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length - 1; i++) {
    const line = lines[i] as string;
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    pos += line.length + 1;
    if (!inFence && line.trim() === "" && i > 0) cut = pos;
  }
  if (cut <= 0) return ["", text];
  return [text.slice(0, cut).replace(/\n+$/, ""), text.slice(cut)];
}
