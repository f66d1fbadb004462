/**
 * Ctrl/Cmd+K: one filterable list of what the page can do: app actions, the sessions, and the daemon's slash commands
 * (picked, a command goes into the open session's composer, ready for its arguments).
 */
import { useSignal, useSignalEffect } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { api, ok, type Schemas } from "./api.js";
import { SearchField } from "./search-field.js";
import { titleOf } from "./sidebar.js";
import { openProviderSettings, panel, select, selectedId, sessions } from "./store.js";

interface Entry {
  key: string;
  label: string;
  hint: string;
  run: () => void;
}

/** The daemon's slash commands (read once per page). */
let commandCache: Promise<Schemas["SlashCommand"][]> | undefined;
export const commands = () => {
  commandCache ??= ok(api.GET("/api/v1/commands")).catch(() => []);
  return commandCache;
};

/** Set by the composer of the open session: puts a command into it. */
export const insertCommand: { current: ((text: string) => void) | null } = { current: null };

export function CommandPalette() {
  const open = useSignal(false);
  const filter = useSignal("");
  const active = useSignal(0);
  const slash = useSignal<Entry[]>([]);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "k") {
        e.preventDefault();
        open.value = !open.value;
        filter.value = "";
        active.value = 0;
      } else if (e.key === "Escape" && open.value) open.value = false;
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
  useSignalEffect(() => {
    if (!open.value) return;
    input.current?.focus();
    void commands().then(
      (list) =>
        (slash.value = list
          .filter((c) => !c.aliasOf)
          .map((c) => ({
            key: `c${c.name}`,
            label: c.name,
            hint: c.description,
            run: () => insertCommand.current?.(`${c.name} `),
          }))),
    );
  });
  if (!open.value) return null;
  const app: Entry[] = [
    { key: "new", label: "New session", hint: "Start a session in a directory", run: () => (panel.value = "new") },
    { key: "settings", label: "Settings", hint: "Provider, permissions, theme", run: () => (panel.value = "settings") },
    { key: "provider", label: "Connect a provider", hint: "Settings → Provider", run: openProviderSettings },
    ...sessions.value.map((s) => ({
      key: `s${s.id}`,
      label: titleOf(s),
      hint: `Open session · ${s.cwd}`,
      run: () => select(s.id),
    })),
  ];
  const inSession = selectedId.value !== null && insertCommand.current !== null;
  const q = filter.value.trim().toLowerCase();
  const entries = [...app, ...(inSession ? slash.value : [])].filter(
    (e) => !q || e.label.toLowerCase().includes(q) || e.hint.toLowerCase().includes(q),
  );
  const choose = (e: Entry | undefined) => {
    if (!e) return;
    open.value = false;
    e.run();
  };
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: a click on the dimmed page closes the palette (Esc does too)
    <div
      class="cmdk-backdrop"
      onMouseDown={(e) => {
        if (e.target === e.currentTarget) open.value = false;
      }}
    >
      <div class="cmdk" role="dialog" aria-label="Command palette">
        <SearchField
          inputRef={input}
          label="Search actions, sessions and commands"
          value={filter.value}
          onValue={(v) => {
            filter.value = v;
            active.value = 0;
          }}
          onKeyDown={(e) => {
            if (e.key === "ArrowDown" || e.key === "ArrowUp") {
              e.preventDefault();
              const n = Math.max(1, entries.length);
              active.value = (active.value + (e.key === "ArrowDown" ? 1 : n - 1)) % n;
            } else if (e.key === "Enter") {
              e.preventDefault();
              choose(entries[active.value]);
            }
          }}
        />
        <div class="cmdk-list" role="listbox" aria-label="Results">
          {entries.map((e, i) => (
            <div
              key={e.key}
              role="option"
              tabIndex={-1}
              aria-selected={i === active.value}
              ref={(el) => {
                if (el && i === active.value) el.scrollIntoView({ block: "nearest" });
              }}
              onMouseDown={(ev) => {
                ev.preventDefault();
                choose(e);
              }}
            >
              <span>{e.label}</span> <span class="muted">{e.hint}</span>
            </div>
          ))}
          {entries.length === 0 && <p class="muted">Nothing matches.</p>}
        </div>
      </div>
    </div>
  );
}
