/** App-wide state as signals: what the whole page shares (the session list, the selection, connectivity). */
import { effect, signal } from "@preact/signals";
import type { Schemas } from "../api/client.js";

export const online = signal(true);
export const sessions = signal<Schemas["SessionSummary"][]>([]);
export const sessionTotal = signal(0);
export const selectedId = signal<string | null>(readHash());
export const config = signal<Schemas["ClientConfig"] | null>(null);
export const panel = signal<"none" | "settings" | "changes" | "files" | "share" | "worktree" | "new">("none");
export const sidebarOpen = signal(false);
// A panel opened from the drawer (phone width) is shown in front: the drawer closes.
effect(() => {
  if (panel.value !== "none") sidebarOpen.value = false;
});
export const toast = signal<string | null>(null);
/** Set when Settings opens to connect a provider: the provider form takes the focus. */
export const focusProvider = signal(false);

export function openProviderSettings(): void {
  focusProvider.value = true;
  panel.value = "settings";
}

/** The configured default model, or "" when none was chosen (the daemon then says "default"). */
export function chosenModel(): string {
  const c = config.value;
  if (!c || c.settings["provider.model"]?.source === "default") return "";
  return c.model === "default" ? "" : c.model;
}

/** A session's model as shown: "default" is the model the provider settings name (none was chosen). */
export function modelLabel(model: string | undefined): string {
  if (!model) return "no model";
  return model === "default" ? "default model" : model;
}
/** "system", "light", "dark" (the page's own palettes) or the id of a daemon theme from GET /themes. */
export const theme = signal<string>(localStorage.getItem("agentd.theme") ?? "system");
export const daemonThemes = signal<Schemas["Theme"][]>([]);

/** Which CSS variable each of a daemon theme's colours paints. */
const THEME_VARS: Record<string, string> = {
  bg: "--bg",
  bgSurface: "--bg2",
  bgRaised: "--bg3",
  agent: "--fg",
  muted: "--muted",
  border: "--border",
  accent: "--accent",
  error: "--danger",
  success: "--add",
  warning: "--attn",
};

function readHash(): string | null {
  const m = /^#\/s\/([A-Za-z0-9_-]+)/.exec(location.hash);
  return m?.[1] ?? null;
}

export function select(id: string | null): void {
  selectedId.value = id;
  const hash = id ? `#/s/${id}` : "#/";
  if (location.hash !== hash) history.pushState(null, "", hash);
  sidebarOpen.value = false;
  // Picking a session shows it: a page-wide panel (new session, settings) gives way.
  if (panel.value === "new" || panel.value === "settings") panel.value = "none";
}

addEventListener("popstate", () => {
  selectedId.value = readHash();
});

let toastTimer: ReturnType<typeof setTimeout> | undefined;
export function showToast(text: string): void {
  toast.value = text;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    toast.value = null;
  }, 4000);
}

export function applyTheme(): void {
  const t = theme.value;
  const root = document.documentElement;
  const custom = daemonThemes.value.find((x) => x.id === t);
  // CSSOM writes, not style attributes: the page's CSP allows no inline styles.
  for (const [key, name] of Object.entries(THEME_VARS)) {
    const colour = custom?.colors[key];
    if (typeof colour === "string") root.style.setProperty(name, colour);
    else root.style.removeProperty(name);
  }
  const dark = custom
    ? custom.appearance !== "light"
    : t === "dark" || (t !== "light" && matchMedia("(prefers-color-scheme: dark)").matches);
  root.dataset.theme = dark ? "dark" : "light";
}

/** A random id; crypto.randomUUID exists only in secure contexts (loopback is one, a plain-http host name is not). */
export function uid(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}
