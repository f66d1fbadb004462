/** A list to choose from with ↑/↓ and Enter (Space toggles in a multi-select); optionally a free-text answer. */
import { Box, Text } from "ink";
import { useRef, useState } from "react";
import type { KeyRoute } from "./keys.js";

/** State whose latest value is also readable at once (keys arriving in one tick see each other's effect). */
function useLatest<T>(initial: T): [T, (v: T) => void, { current: T }] {
  const [value, setValue] = useState(initial);
  const ref = useRef(initial);
  const set = (v: T) => {
    ref.current = v;
    setValue(v);
  };
  return [value, set, ref];
}

export interface PickerItem {
  label: string;
  value: string;
  hint?: string;
  /** Shown after the label in bold yellow: something about the item that needs attention. */
  badge?: string;
}

export interface PickerProps {
  /** Where the app's single key handler sends keys (set while this picker is shown). */
  keys: KeyRoute;
  title: string;
  detail?: string[];
  items: PickerItem[];
  multi?: boolean;
  /** Adds an "Other…" entry that takes typed text. */
  other?: boolean;
  onSubmit(values: string[]): void;
  onCancel?(): void;
  /** Letter shortcuts: a key maps to an item's value (single select). */
  shortcuts?: Record<string, string>;
  color?: string;
}

const OTHER = "\u0000other";

export function Picker(props: PickerProps) {
  const items = props.other ? [...props.items, { label: "Other (type an answer)…", value: OTHER }] : props.items;
  const [index, setIndex, indexRef] = useLatest(0);
  const [chosen, setChosen, chosenRef] = useLatest<Set<string>>(new Set());
  const [typing, setTyping, typingRef] = useLatest<string | undefined>(undefined);

  props.keys.current = (input, key) => {
    const index = indexRef.current;
    const chosen = chosenRef.current;
    const typing = typingRef.current;
    if (typing !== undefined) {
      if (key.return) {
        if (typing.trim()) props.onSubmit([typing.trim()]);
      } else if (key.escape) setTyping(undefined);
      else if (key.backspace || key.delete) setTyping(typing.slice(0, -1));
      else if (input && !key.ctrl && !key.meta) setTyping(typing + input.replace(/[\r\n]+/g, " "));
      return;
    }
    if (key.upArrow) setIndex((index + items.length - 1) % items.length);
    else if (key.downArrow || key.tab) setIndex((index + 1) % items.length);
    else if (key.escape) props.onCancel?.();
    else if (props.multi && input === " ") {
      const v = items[index]?.value as string;
      const next = new Set(chosen);
      if (next.has(v)) next.delete(v);
      else next.add(v);
      setChosen(next);
    } else if (key.return) {
      const v = items[index]?.value as string;
      if (v === OTHER) setTyping("");
      else if (props.multi) {
        const values = chosen.size ? [...chosen] : [v];
        props.onSubmit(values);
      } else props.onSubmit([v]);
    } else if (!props.multi && input && props.shortcuts?.[input.toLowerCase()]) {
      props.onSubmit([props.shortcuts[input.toLowerCase()] as string]);
    } else if (/^[1-9]$/.test(input) && Number(input) <= items.length && !props.multi) {
      const v = items[Number(input) - 1]?.value as string;
      if (v === OTHER) setTyping("");
      else props.onSubmit([v]);
    }
  };

  return (
    <Box flexDirection="column" borderStyle="round" borderColor={props.color ?? "cyan"} paddingX={1}>
      <Text bold>{props.title}</Text>
      {props.detail?.map((d) => (
        <Text key={d}>{d}</Text>
      ))}
      {items.map((item, i) => {
        const here = i === index;
        const mark = props.multi ? (chosen.has(item.value) ? "[x] " : "[ ] ") : "";
        return (
          <Text key={item.value} color={here ? (props.color ?? "cyan") : undefined}>
            {here ? "❯ " : "  "}
            {mark}
            {i + 1}. {item.label}
            {item.badge ? (
              <Text bold color="yellow">
                {" "}
                [{item.badge}]
              </Text>
            ) : null}
            {item.hint ? <Text dimColor> {item.hint}</Text> : null}
          </Text>
        );
      })}
      {typing !== undefined ? (
        <Text>
          answer: {typing}
          <Text inverse> </Text>
        </Text>
      ) : (
        <Text dimColor>
          ↑/↓ choose · {props.multi ? "Space toggle · " : ""}Enter confirm{props.onCancel ? " · Esc cancel" : ""}
        </Text>
      )}
    </Box>
  );
}
