/**
 * A virtualised list for the transcript: only the rows near the viewport are in the document, whatever the
 * session holds (10,000 messages scroll like 20). Rows have their own heights, measured once rendered (a
 * ResizeObserver) and estimated before; the space of the rows left out is padding above and below. Scrolling
 * keeps its place when estimates turn into measurements above the viewport (the browser's scroll anchoring).
 */
import type { ComponentChildren, RefObject } from "preact";
import { useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";

/** Rows rendered beyond each edge of the viewport, in pixels: enough for a fast wheel or a Page Up. */
const OVERSCAN_PX = 1500;
/** A row's height before it was measured. */
const ESTIMATE_PX = 110;

export interface VirtualList {
  /** The rows to render: [start, end) of the keys. */
  start: number;
  end: number;
  /** The height of the rows left out above and below. */
  above: number;
  below: number;
  /** Observes a rendered row (its `data-vkey` names it). */
  observer: ResizeObserver | undefined;
}

/**
 * The window of `keys` to render in `scroller`. `atBottom()` says the view follows the bottom (the window is then
 * the last rows, whatever the scroll position says before the layout catches up).
 */
export function useVirtualList(
  keys: readonly string[],
  scroller: RefObject<HTMLElement | null>,
  list: RefObject<HTMLElement | null>,
  atBottom: () => boolean,
): VirtualList {
  const heights = useRef(new Map<string, number>());
  const [observer, setObserver] = useState<ResizeObserver>();
  const [version, setVersion] = useState(0);
  const [view, setView] = useState({ top: 0, height: 800 });

  // Offsets of every row: recomputed when the rows or a measurement change, not on each scroll.
  const offsets = useMemo(() => {
    const out = new Float64Array(keys.length + 1);
    for (let i = 0; i < keys.length; i++)
      out[i + 1] = (out[i] as number) + (heights.current.get(keys[i] as string) ?? ESTIMATE_PX);
    return out;
    // biome-ignore lint/correctness/useExhaustiveDependencies: `version` counts the measurements kept in the ref
  }, [keys, version]);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const read = () => {
      const top = el.scrollTop - (list.current?.offsetTop ?? 0);
      setView((v) => (v.top === top && v.height === el.clientHeight ? v : { top, height: el.clientHeight }));
    };
    const ro = new ResizeObserver((entries) => {
      let changed = false;
      for (const e of entries) {
        const row = e.target as HTMLElement;
        const key = row.dataset.vkey;
        if (key === undefined) continue;
        const h = row.offsetHeight;
        if (h > 0 && heights.current.get(key) !== h) {
          heights.current.set(key, h);
          changed = true;
        }
      }
      if (changed) setVersion((n) => n + 1);
    });
    const resize = new ResizeObserver(read);
    resize.observe(el);
    el.addEventListener("scroll", read, { passive: true });
    setObserver(ro);
    read();
    return () => {
      ro.disconnect();
      resize.disconnect();
      el.removeEventListener("scroll", read);
    };
  }, [scroller, list]);

  const total = offsets[keys.length] as number;
  const follow = atBottom();
  const y0 = (follow ? total - view.height : view.top) - OVERSCAN_PX;
  const y1 = (follow ? total : view.top + view.height) + OVERSCAN_PX;
  const start = Math.max(0, firstAfter(offsets, y0) - 1);
  const end = Math.min(keys.length, Math.max(start + 1, firstAfter(offsets, y1)));
  return {
    start,
    end,
    above: offsets[start] as number,
    below: total - (offsets[end] as number),
    observer,
  };
}

/** The first index i with offsets[i] > y (binary search; offsets grow). */
function firstAfter(offsets: Float64Array, y: number): number {
  let lo = 0;
  let hi = offsets.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((offsets[mid] as number) > y) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** One rendered row, measured while it is in the document. */
export function VirtualRow({
  vkey,
  observer,
  children,
}: {
  vkey: string;
  observer: ResizeObserver | undefined;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el || !observer) return;
    observer.observe(el);
    return () => observer.unobserve(el);
  }, [observer]);
  return (
    <div class="vrow" data-vkey={vkey} ref={ref}>
      {children}
    </div>
  );
}
