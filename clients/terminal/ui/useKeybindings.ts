/**
 * The app's own keys (Ctrl-C twice quits, Ctrl+T steer/queue, Ctrl+O thinking); every other key goes to whatever
 * is active, through one handler (see keys.ts).
 */
import { useInput } from "ink";
import { useRef, useState } from "react";
import type { KeyRoute } from "./keys.js";
import type { SessionView } from "./store.js";

export function useKeybindings(store: SessionView, keys: KeyRoute, quit: () => void) {
  const [queueMode, setQueueMode] = useState(false);
  const [quitArmed, setQuitArmed] = useState(false);
  const quitArmedRef = useRef(false);
  const [clearToken, setClearToken] = useState(0);
  const [showThinking, setShowThinking] = useState(false);

  useInput((input, key) => {
    // Ctrl-C pressed twice quickly can arrive as one chunk.
    if (input.length > 1 && [...input].every((c) => c === "\u0003")) return quit();
    if (key.ctrl && input === "c") {
      if (quitArmedRef.current) return quit();
      quitArmedRef.current = true;
      setQuitArmed(true);
      setClearToken((n) => n + 1);
      setTimeout(() => {
        quitArmedRef.current = false;
        setQuitArmed(false);
      }, 2000);
      return;
    }
    if (key.ctrl && input === "t") return setQueueMode((q) => !q);
    if (key.ctrl && input === "o") {
      setShowThinking((v) => !v);
      const last = [...store.items].reverse().find((i) => i.kind === "thinking");
      if (!showThinking && last && last.kind === "thinking") {
        store.add({ kind: "thinking", text: last.text });
        store.changed();
      }
      return;
    }
    // "text\r" is keys typed before they were read, then Enter: deliver them as such.
    if (input.length > 1 && /^[^\r\n]+\r$/.test(input)) {
      keys.current?.(input.slice(0, -1), key);
      keys.current?.("", { ...key, return: true });
      return;
    }
    keys.current?.(input, key);
  });

  return { queueMode, quitArmed, clearToken, showThinking };
}
