/**
 * A virtualised list for the transcript: only the rows near the viewport are in the document, whatever the
 * session holds (10,000 messages scroll like 20). Rows have their own heights, measured once rendered (a
 * ResizeObserver) and estimated before; the space of the rows left out is padding above and below. The row at the
 * top of the view stays where it is on screen when what is above it changes: older rows paged in, estimates turned
 * into measurements. (The browser's own scroll anchoring gives up when the padding changes, so the list does it,
 * and the scroller has `overflow-anchor: none`.)
 */
import type { ComponentChildren, RefObject } from "preact";
import { useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";

/** Rows rendered beyond each edge of the viewport, in pixels: enough for a fast wheel or a Page Up. */
const OVERSCAN_PX = 1500;
/** A row's height before it was measured. */
const ESTIMATE_PX = 110;
/**
 * How far the view moves before the window is drawn again around it (less than OVERSCAN_PX, so the viewport never
 * reaches the window's edge): a scroll re-renders the list every few frames, not on each.
 */
const SLACK_PX = 700;

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
  // Where the view is, as a row and the distance into it: rows paged in above keep the window on the same rows.
  const [view, setView] = useState<View>({ key: undefined, into: 0, top: 0, height: 800 });

  // Offsets of every row and each key's index: recomputed when the rows or a measurement change, not on each scroll.
  // (`version` counts the measurements kept in the ref.)
  const layout = useMemo(() => {
    const offsets = new Float64Array(keys.length + 1);
    const index = new Map<string, number>();
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      index.set(key, i);
      offsets[i + 1] = (offsets[i] as number) + (heights.current.get(key) ?? ESTIMATE_PX);
    }
    return { keys, offsets, index };
  }, [keys, version]);
  const latest = useRef(layout);
  latest.current = layout;
  /** The row at the top of the view at the last scroll, and where its top was in the scrolled content. */
  const anchor = useRef<{ key: string; y: number } | null>(null);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const read = () => {
      const a = topRow(el, list.current);
      anchor.current = a;
      const { keys, offsets, index } = latest.current;
      // Where the view's top is among the rows: from the drawn row it falls in (a row drawn but not measured yet is
      // taller or shorter than its estimate), else from the scroll position (the padding is made of the estimates).
      const drawn = a && a.y <= el.scrollTop ? index.get(a.key) : undefined;
      const top =
        a && drawn !== undefined
          ? (offsets[drawn] as number) + el.scrollTop - a.y
          : el.scrollTop - (list.current?.offsetTop ?? 0);
      const height = el.clientHeight;
      setView((v) => {
        // The window follows the view only once it moved SLACK_PX from where the window was drawn.
        if (v.height === height && Math.abs(topOf(v, offsets, index) - top) < SLACK_PX) return v;
        const i = drawn ?? Math.max(0, firstAfter(offsets, top) - 1);
        return { key: keys[i], into: top - (offsets[i] as number), top, height };
      });
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

  // After each render: what changed above the row at the top of the view moves the scroll by as much. Then the row
  // is noted again from what is drawn now: a render that moved the window (a jump far up draws other rows) leaves
  // the row noted at the scroll out of the page, and the next change above would find nothing to hold in place.
  useLayoutEffect(() => {
    const el = scroller.current;
    const a = anchor.current;
    if (!el || !a || atBottom()) return;
    const row = list.current?.querySelector(`[data-vkey="${CSS.escape(a.key)}"]`);
    if (row) {
      const y = contentY(el, row);
      if (Math.abs(y - a.y) >= 0.5) el.scrollTop += y - a.y;
    }
    anchor.current = topRow(el, list.current);
  });

  const { offsets, index } = layout;
  const total = offsets[keys.length] as number;
  const top = atBottom() ? total - view.height : topOf(view, offsets, index);
  const start = Math.max(0, firstAfter(offsets, top - OVERSCAN_PX) - 1);
  const end = Math.min(keys.length, Math.max(start + 1, firstAfter(offsets, top + view.height + OVERSCAN_PX)));
  return {
    start,
    end,
    above: offsets[start] as number,
    below: total - (offsets[end] as number),
    observer,
  };
}

/** The view: the row at its top (by key), how far into that row it starts, its top in pixels then, its height. */
interface View {
  key: string | undefined;
  into: number;
  top: number;
  height: number;
}

/** The view's top in pixels from the list's top: from its row, or where it was when that row is gone. */
function topOf(v: View, offsets: Float64Array, index: ReadonlyMap<string, number>): number {
  const i = v.key === undefined ? undefined : index.get(v.key);
  return i === undefined ? v.top : (offsets[i] as number) + v.into;
}

/** Where a row's top is in the scroller's content (independent of the scroll position). */
function contentY(el: HTMLElement, row: Element): number {
  return row.getBoundingClientRect().top - el.getBoundingClientRect().top + el.scrollTop;
}

/** The first rendered row that reaches into the view, and where it is in the content. */
function topRow(el: HTMLElement, list: HTMLElement | null): { key: string; y: number } | null {
  const edge = el.getBoundingClientRect().top;
  for (const row of list?.children ?? []) {
    const key = (row as HTMLElement).dataset.vkey;
    if (key !== undefined && row.getBoundingClientRect().bottom > edge) return { key, y: contentY(el, row) };
  }
  return null;
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
