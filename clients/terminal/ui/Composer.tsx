/**
 * The multi-line composer: Enter sends, Alt+Enter / Ctrl+J / a trailing backslash add a line, ↑/↓ walk the
 * history at the first/last line, Tab completes (slash commands and their arguments, @paths), long pastes
 * collapse to a chip that is expanded when sent.
 */
import { Box, type Key, Text } from "ink";
import { useEffect, useRef, useState } from "react";
import * as ed from "./editor.js";
import type { KeyRoute } from "./keys.js";

// Control characters other than tab, newline and carriage return (a pasted text keeps those).
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it splits at
const CONTROL_OR_TEXT = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]+/g;

export interface Suggestion {
  label: string;
  hint?: string;
  apply(e: ed.Edit): ed.Edit;
}

export interface ComposerProps {
  active: boolean;
  keys: KeyRoute;
  history: readonly string[];
  placeholder: string;
  onSubmit(text: string, raw: string): void;
  complete(e: ed.Edit): Promise<Suggestion[]>;
  /** Esc with nothing to dismiss here. */
  onEscape(): void;
  /** Bumped by the app to clear the composer (first Ctrl-C). */
  clearToken: number;
  /** A message that could not be sent, put back (when the composer is empty) each time `n` changes. */
  restore?: { text: string; n: number };
}

export function Composer(props: ComposerProps) {
  // Keys that arrive in one tick are handled before React re-renders: the current text lives in a ref.
  const [edit, setEditState] = useState<ed.Edit>(ed.empty);
  const current = useRef<ed.Edit>(ed.empty);
  const setEdit = (e: ed.Edit) => {
    current.current = e;
    setEditState(e);
  };
  const [suggestions, setSuggestions] = useState<Suggestion[]>([]);
  const [selected, setSelected] = useState(0);
  const hRef = useRef(-1);
  const setHIndex = (n: number) => {
    hRef.current = n;
  };
  const draft = useRef<ed.Edit>(ed.empty);
  const chips = useRef(new Map<string, string>());
  const pasteCount = useRef(0);
  const request = useRef(0);

  const lastClear = useRef(props.clearToken);
  if (props.clearToken !== lastClear.current) {
    lastClear.current = props.clearToken;
    current.current = ed.empty;
  }
  useEffect(() => {
    if (props.clearToken > 0) {
      setEditState(ed.empty);
      setSuggestions([]);
    }
  }, [props.clearToken]);

  const restore = props.restore;
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once per restore (its n), not per render
  useEffect(() => {
    if (!restore?.n || current.current.text) return;
    const e = { text: restore.text, cursor: restore.text.length };
    current.current = e;
    setEditState(e);
  }, [restore?.n]);

  // Completions follow the text (debounced; a newer request wins).
  useEffect(() => {
    const n = ++request.current;
    const wants = (edit.text.startsWith("/") && !edit.text.includes("\n")) || ed.atToken(edit) !== undefined;
    if (!wants) {
      setSuggestions([]);
      return;
    }
    const timer = setTimeout(() => {
      props.complete(edit).then(
        (list) => {
          if (n !== request.current) return;
          setSuggestions(list.slice(0, 8));
          setSelected(0);
        },
        () => {},
      );
    }, 40);
    return () => clearTimeout(timer);
  }, [edit, props.complete]);

  const set = (e: ed.Edit) => {
    setEdit(e);
    setHIndex(-1);
  };

  const submit = () => submitText(current.current.text);
  const submitText = (raw: string) => {
    if (!raw.trim()) return;
    const text = ed.expandChips(raw, chips.current);
    chips.current.clear();
    setEdit(ed.empty);
    setHIndex(-1);
    setSuggestions([]);
    props.onSubmit(text, raw);
  };

  const walkHistory = (dir: 1 | -1) => {
    const list = props.history;
    const hIndex = hRef.current;
    const next = hIndex + dir;
    if (next < -1 || next >= list.length) return;
    if (hIndex === -1) draft.current = current.current;
    setHIndex(next);
    if (next === -1) setEdit(draft.current);
    else {
      const text = list[list.length - 1 - next] ?? "";
      setEdit({ text, cursor: text.length });
    }
  };

  const handle = (input: string, key: Key) => {
    // Keys typed faster than they are read arrive as one chunk ("\x15look", "ab\x7f"): take them one by one.
    if (!key.ctrl && input.length > 1 && CONTROL.test(input)) {
      for (const part of input.match(CONTROL_OR_TEXT) ?? []) {
        const code = part.charCodeAt(0);
        if (part.length > 1 || (code >= 0x20 && code !== 0x7f)) handle(part, { ...key, ctrl: false });
        else if (code === 0x7f || code === 0x08) handle("", { ...key, backspace: true });
        else if (code === 0x09) handle("", { ...key, tab: true });
        else handle(String.fromCharCode(code + 96), { ...key, ctrl: true });
      }
      return;
    }
    {
      const edit = current.current;
      if (key.ctrl && (input === "c" || input === "t" || input === "o")) return; // the app's keys
      if (key.tab) {
        const s = suggestions[selected];
        if (s) set(s.apply(edit));
        return;
      }
      if (key.escape) {
        if (suggestions.length) setSuggestions([]);
        else props.onEscape();
        return;
      }
      if (key.return) {
        if (key.meta) set(ed.insert(edit, "\n"));
        else if (edit.text.slice(0, edit.cursor).endsWith("\\")) set(ed.insert(ed.backspace(edit), "\n"));
        else submit();
        return;
      }
      if (input === "\n" || (key.ctrl && input === "j")) {
        set(ed.insert(edit, "\n"));
        return;
      }
      if (key.upArrow) {
        if (suggestions.length > 1) setSelected((i) => (i + suggestions.length - 1) % suggestions.length);
        else if (ed.onFirstLine(edit)) walkHistory(1);
        else setEdit(ed.vertical(edit, -1));
        return;
      }
      if (key.downArrow) {
        if (suggestions.length > 1) setSelected((i) => (i + 1) % suggestions.length);
        else if (ed.onLastLine(edit)) walkHistory(-1);
        else setEdit(ed.vertical(edit, 1));
        return;
      }
      if (key.leftArrow) return setEdit(ed.left(edit));
      if (key.rightArrow) return setEdit(ed.right(edit));
      if (key.home || (key.ctrl && input === "a")) return setEdit(ed.home(edit));
      if (key.end || (key.ctrl && input === "e")) return setEdit(ed.end(edit));
      if (key.backspace || key.delete) return set(ed.backspace(edit));
      if (key.ctrl && input === "w") return set(ed.deleteWord(edit));
      if (key.ctrl && input === "u") return set(ed.deleteToLineStart(edit));
      if (key.ctrl && input === "d") return set(ed.del(edit));
      if (key.ctrl || !input) return;
      // Keys typed faster than they are read arrive together: "text\r" is typing then Enter, not a paste.
      if (/^[^\r\n]+[\r\n]$/.test(input)) {
        const typed = ed.insert(edit, input.slice(0, -1));
        if (typed.text.slice(0, typed.cursor).endsWith("\\")) set(ed.insert(ed.backspace(typed), "\n"));
        else submitText(typed.text);
        return;
      }
      const text = input.replace(/\r\n?/g, "\n").replace(new RegExp(CONTROL.source, "g"), "");
      if (!text) return;
      if (text.length > 1 && ed.isLongPaste(text)) {
        const label = ed.chipLabel(++pasteCount.current, text);
        chips.current.set(label, text);
        set(ed.insert(edit, label));
      } else set(ed.insert(edit, text));
    }
  };
  if (props.active) props.keys.current = handle;

  const lines = edit.text.split("\n");
  let offset = 0;
  return (
    <Box flexDirection="column">
      {edit.text === "" ? (
        <Text>
          <Text color="cyan">› </Text>
          <Text inverse> </Text>
          <Text dimColor>{props.placeholder}</Text>
        </Text>
      ) : (
        lines.map((line, i) => {
          const start = offset;
          offset += line.length + 1;
          const here = edit.cursor >= start && edit.cursor <= start + line.length;
          const col = edit.cursor - start;
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: lines have no identity but their position
            <Text key={i}>
              <Text color="cyan">{i === 0 ? "› " : "  "}</Text>
              {here ? (
                <>
                  {line.slice(0, col)}
                  <Text inverse>{line[col] ?? " "}</Text>
                  {line.slice(col + 1)}
                </>
              ) : (
                line
              )}
            </Text>
          );
        })
      )}
      {suggestions.length > 0 && (
        <Box flexDirection="column" marginLeft={2}>
          {suggestions.map((s, i) => (
            <Text key={s.label} color={i === selected ? "cyan" : undefined} dimColor={i !== selected}>
              {i === selected ? "▸ " : "  "}
              {s.label}
              {s.hint ? <Text dimColor> {s.hint}</Text> : null}
            </Text>
          ))}
        </Box>
      )}
    </Box>
  );
}
