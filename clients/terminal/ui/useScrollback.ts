/**
 * What <Static> prints to the scrollback: every item once; after a resize or a rewind's redraw, the last REPRINT
 * items again (remounted under a new key), re-wrapped to the terminal's width.
 */
import { useStdout } from "ink";
import { useEffect, useRef, useState } from "react";
import type { Item, SessionView } from "./store.js";

const REPRINT = 300;

/** The terminal width; a resize reprints the transcript (see start.tsx), re-wrapped to the new width. */
function useWidth(onResize: () => void): number {
  const { stdout } = useStdout();
  const [width, setWidth] = useState(stdout.columns || 80);
  const cb = useRef(onResize);
  cb.current = onResize;
  useEffect(() => {
    const onResize = () => {
      setWidth(stdout.columns || 80);
      cb.current();
    };
    stdout.on("resize", onResize);
    return () => {
      stdout.off("resize", onResize);
    };
  }, [stdout]);
  return width;
}

export function useScrollback(store: SessionView): { width: number; staticKey: string; items: Item[] } {
  const [resizes, setResizes] = useState(0);
  const staticFrom = useRef(0);
  const width = useWidth(() => {
    staticFrom.current = Math.max(0, store.items.length - REPRINT);
    setResizes((k) => k + 1);
  });
  // A rewind drew the transcript anew (store.redraws): the screen is cleared, and <Static> remounted (its key) to
  // print the items again, in the very render that first shows them. Were the screen cleared in an effect after it,
  // that render's <Static> would first print the new items past the old count below the old transcript.
  const { stdout } = useStdout();
  const cleared = useRef(store.redraws);
  if (cleared.current !== store.redraws) {
    cleared.current = store.redraws;
    stdout.write("\x1b[2J\x1b[3J\x1b[H");
    staticFrom.current = Math.max(0, store.items.length - REPRINT);
  }
  return {
    width,
    staticKey: `${resizes}.${store.redraws}`,
    items: staticFrom.current ? store.items.slice(staticFrom.current) : store.items,
  };
}
