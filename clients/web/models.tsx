/**
 * Model choice: the provider's list (GET /models, the cached list when the provider cannot answer), the models used
 * last on this browser first. A free-text field with suggestions (new session, settings) and the composer's picker.
 */
import { signal, useSignal } from "@preact/signals";
import { useEffect, useLayoutEffect, useRef } from "preact/hooks";
import { api, messageOf, ok } from "./api.js";
import { SearchField } from "./search-field.js";
import { config, modelLabel } from "./store.js";

const RECENT_KEY = "agentd.recentModels";
const MAX_RECENT = 5;

export const modelList = signal<string[]>([]);
export const modelListError = signal<string | null>(null);
let loading: Promise<void> | undefined;

/** Loads the list once per page (again after `force`, e.g. when the provider changed). */
export function loadModels(force = false): Promise<void> {
  if (loading && !force) return loading;
  loading = (async () => {
    if (config.value && !config.value.providerConfigured) {
      modelList.value = [];
      return;
    }
    try {
      const live = await ok(api.GET("/api/v1/models"));
      modelList.value = [...new Set(live.map((m) => m.id))].sort();
      modelListError.value = null;
    } catch (err) {
      modelListError.value = messageOf(err);
      const cached = await ok(api.GET("/api/v1/models/cached")).catch(() => []);
      modelList.value = [...new Set(cached.map((m) => m.id))].sort();
    }
  })();
  return loading;
}

export function recentModels(): string[] {
  try {
    const v = JSON.parse(localStorage.getItem(RECENT_KEY) ?? "[]") as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string").slice(0, MAX_RECENT) : [];
  } catch {
    return [];
  }
}

export function rememberModel(id: string): void {
  const next = [id, ...recentModels().filter((x) => x !== id)].slice(0, MAX_RECENT);
  localStorage.setItem(RECENT_KEY, JSON.stringify(next));
}

/** Recent models first (those the provider still lists, or all of them while the list is unknown), then the rest. */
function ordered(filter: string): Array<{ id: string; recent: boolean }> {
  const all = modelList.value;
  const recent = recentModels().filter((r) => all.length === 0 || all.includes(r));
  const q = filter.trim().toLowerCase();
  const match = (id: string) => !q || id.toLowerCase().includes(q);
  return [
    ...recent.filter(match).map((id) => ({ id, recent: true })),
    ...all.filter((id) => !recent.includes(id) && match(id)).map((id) => ({ id, recent: false })),
  ];
}

let datalistCounter = 0;

/** A text field suggesting the provider's models (any id may still be typed). */
export function ModelInput({
  value,
  onChange,
  label,
}: {
  value: string;
  onChange: (v: string) => void;
  label: string;
}) {
  const id = useRef(`models-${++datalistCounter}`);
  useEffect(() => void loadModels(), []);
  return (
    <label>
      {label}
      <input
        type="text"
        list={id.current}
        autocomplete="off"
        spellcheck={false}
        placeholder={modelList.value.length ? "Pick or type a model" : "Model id"}
        value={value}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
      <datalist id={id.current}>
        {ordered("").map((m) => (
          <option key={m.id} value={m.id} />
        ))}
      </datalist>
    </label>
  );
}

/**
 * The composer's model button: a filterable list of the provider's models, recent ones first. `choose` switches the
 * session's model; the list closes on a pick, Esc or a click outside.
 */
export function ModelPicker({ current, choose }: { current: string; choose: (id: string) => Promise<void> }) {
  const open = useSignal(false);
  const filter = useSignal("");
  const active = useSignal(0);
  const box = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLInputElement>(null);
  // A layout effect, so Esc and a click outside work from the render that opened the list, not a frame later.
  useLayoutEffect(() => {
    if (!open.value) return;
    void loadModels();
    input.current?.focus();
    const away = (e: MouseEvent) => {
      if (box.current && !box.current.contains(e.target as Node)) open.value = false;
    };
    const esc = (e: KeyboardEvent) => {
      if (e.key === "Escape") open.value = false;
    };
    document.addEventListener("mousedown", away);
    document.addEventListener("keydown", esc);
    return () => {
      document.removeEventListener("mousedown", away);
      document.removeEventListener("keydown", esc);
    };
  }, [open.value]);
  const items = ordered(filter.value);
  const typed = filter.value.trim();
  const pick = async (id: string) => {
    open.value = false;
    filter.value = "";
    await choose(id);
    rememberModel(id);
  };
  return (
    <div class="model-picker" ref={box}>
      <button
        type="button"
        class="model-btn"
        aria-haspopup="listbox"
        aria-expanded={open.value}
        title="Switch this session's model"
        onClick={() => {
          open.value = !open.value;
          active.value = 0;
        }}
      >
        {modelLabel(current)} ▾
      </button>
      {open.value && (
        <div class="model-pop">
          <SearchField
            label="Filter models"
            inputRef={input}
            value={filter.value}
            onValue={(v) => {
              filter.value = v;
              active.value = 0;
            }}
            onKeyDown={(e) => {
              if (e.key === "Escape") {
                e.preventDefault();
                e.stopPropagation();
                open.value = false;
              } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
                e.preventDefault();
                const n = Math.max(1, items.length);
                active.value = (active.value + (e.key === "ArrowDown" ? 1 : n - 1)) % n;
              } else if (e.key === "Enter") {
                e.preventDefault();
                const id = items[active.value]?.id ?? typed;
                if (id) void pick(id);
              }
            }}
          />
          <div role="listbox" aria-label="Models" class="model-list">
            {items.map((m, i) => (
              <div
                key={m.id}
                role="option"
                tabIndex={-1}
                aria-selected={i === active.value}
                class={m.id === current ? "current" : undefined}
                onMouseDown={(e) => {
                  e.preventDefault();
                  void pick(m.id);
                }}
              >
                {m.id}
                {m.recent && <span class="muted"> · recent</span>}
                {m.id === current && <span class="muted"> · current</span>}
              </div>
            ))}
            {items.length === 0 && (
              <p class="muted">
                {modelList.value.length
                  ? "No model matches."
                  : modelListError.value
                    ? `The provider did not list its models: ${modelListError.value}`
                    : "Loading models…"}
              </p>
            )}
          </div>
        </div>
      )}
    </div>
  );
}
