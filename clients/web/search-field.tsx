/** A search box whose label is also its placeholder (the session list, the model filter, the command palette). */
import type { Ref } from "preact";

export function SearchField(props: {
  label: string;
  value: string;
  onValue: (v: string) => void;
  onKeyDown?: (e: KeyboardEvent) => void;
  inputRef?: Ref<HTMLInputElement>;
}) {
  return (
    <input
      ref={props.inputRef}
      type="search"
      aria-label={props.label}
      placeholder={props.label}
      value={props.value}
      onInput={(e) => props.onValue(e.currentTarget.value)}
      onKeyDown={props.onKeyDown}
    />
  );
}
