/** The page: header, the session list, and the open session (transcript, decisions, composer) or a panel. */
import { useSignal, useSignalEffect } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api, ok } from "./api.js";
import { Composer } from "./composer.js";
import { Decisions } from "./decisions.js";
import { CommandPalette } from "./palette.js";
import { Changes, Files, NewSession } from "./panels.js";
import { SessionState } from "./session.js";
import { SessionHeader } from "./session-header.js";
import { Settings, showReasoning } from "./settings.js";
import { SharePanel } from "./share.js";
import { loadSessions, Sidebar, titleOf } from "./sidebar.js";
import {
  applyTheme,
  config,
  daemonThemes,
  online,
  openProviderSettings,
  panel,
  select,
  selectedId,
  sessions,
  sidebarOpen,
  theme,
  toast,
} from "./store.js";
import { followTabState } from "./title.js";
import { Transcript } from "./transcript.js";
import { WorktreePanel } from "./worktree.js";

function notify(title: string, body: string): void {
  if (!document.hidden || !("Notification" in window) || Notification.permission !== "granted") return;
  new Notification(title, { body });
}

/** While the daemon is unreachable, ask it every two seconds; the event streams reconnect by themselves. */
function useReconnect() {
  useSignalEffect(() => {
    if (online.value) return;
    const t = setInterval(() => {
      void fetch("/api/v1/config", { credentials: "same-origin" })
        .then((r) => {
          if (r.status === 401) location.assign("/login");
          online.value = true;
          void loadSessions().catch(() => undefined);
        })
        .catch(() => undefined);
    }, 2000);
    return () => clearInterval(t);
  });
}

/** The first screen: what to do next; without a provider, connecting one comes first. */
function Home() {
  const c = config.value;
  if (c && !c.providerConfigured)
    return (
      <div class="empty">
        <section class="card first-run" aria-label="Connect a model">
          <h1>Connect a model to start</h1>
          <p>
            agentd runs its agent with a model from an OpenAI-compatible endpoint: OpenAI, OpenRouter, a local Ollama or
            llama.cpp server, and others. No provider is connected yet.
          </p>
          <button type="button" class="primary" onClick={openProviderSettings}>
            Connect a provider
          </button>
          <p class="muted">
            Or set <code>OPENAI_BASE_URL</code> and <code>OPENAI_API_KEY</code> before starting the daemon.
          </p>
        </section>
      </div>
    );
  return (
    <div class="empty">
      <h1>agentd</h1>
      <p>Pick a session on the left, or start a new one.</p>
      <button type="button" class="primary" onClick={() => (panel.value = "new")}>
        Start a new session
      </button>
    </div>
  );
}

/** In a session while no provider is connected: the composer would only fail, so say so where it is used. */
function NoProviderBar() {
  if (!config.value || config.value.providerConfigured) return null;
  return (
    <div class="no-provider" role="status">
      No model is connected: messages cannot be answered yet.
      <button type="button" class="primary" onClick={openProviderSettings}>
        Connect a provider
      </button>
    </div>
  );
}

function SessionView({ id }: { id: string }) {
  const state = useSignal<SessionState | null>(null);
  useEffect(() => {
    const s = new SessionState(id);
    s.onTurnEnd = (why) =>
      notify(
        "agentd",
        why === "done" ? `${titleOf(s.info.peek() ?? { id, cwd: "" })}: turn finished` : "Waiting for your decision",
      );
    state.value = s;
    void s.open();
    return () => s.close();
  }, [id]);
  const s = state.value;
  if (!s) return null;
  if (s.loadError.value && !s.info.value) return <p class="empty">Could not open the session: {s.loadError.value}</p>;
  return (
    <div class="session">
      <SessionHeader s={s} />
      <div class="session-body">
        <div class="conversation">
          <Transcript s={s} />
          <Decisions s={s} />
          <NoProviderBar />
          <Composer key={s.id} s={s} />
        </div>
        {panel.value === "changes" && <Changes s={s} />}
        {panel.value === "files" && <Files s={s} />}
        {panel.value === "share" && <SharePanel s={s} />}
        {panel.value === "worktree" && <WorktreePanel s={s} />}
      </div>
    </div>
  );
}

/**
 * The session drawer (phone width): Esc or a tap on the backdrop closes it. The listener stays for the page's life
 * and reads the signal when a key comes: a signal effect re-runs only at the next animation frame, so an Esc
 * pressed right after the drawer opened would find no listener yet.
 */
function useDrawerKeys() {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && sidebarOpen.peek()) sidebarOpen.value = false;
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
}

export function App() {
  useReconnect();
  useDrawerKeys();
  useEffect(followTabState, []);
  useEffect(() => {
    void ok(api.GET("/api/v1/config"))
      .then((c) => {
        config.value = c;
        showReasoning.value = c.showReasoning;
        return ok(api.GET("/api/v1/themes")).then((themes) => {
          daemonThemes.value = themes;
          // The daemon-wide theme, once someone chose it (/theme, settings, config), applies until this page picks
          // one of its own; the built-in default does not override the system's light or dark preference.
          const chosen = c.settings.theme?.source !== "default";
          if (!localStorage.getItem("agentd.theme") && chosen && c.theme && themes.some((t) => t.id === c.theme))
            theme.value = c.theme;
          applyTheme();
        });
      })
      .catch(() => undefined);
  }, []);
  const id = selectedId.value;
  // Other sessions waiting for the user: at phone width the list is behind the menu button, which then says so.
  const waitingElsewhere = sessions.value.filter((s) => s.waiting && s.id !== id).length;
  return (
    <div class="app">
      <header class="topbar">
        <button
          type="button"
          class="menu"
          aria-label={waitingElsewhere ? `Show sessions (${waitingElsewhere} need you)` : "Show sessions"}
          aria-expanded={sidebarOpen.value}
          onClick={() => (sidebarOpen.value = !sidebarOpen.value)}
        >
          ☰{waitingElsewhere > 0 && <span class="menu-attn">{waitingElsewhere}</span>}
        </button>
        <button type="button" class="brand" onClick={() => select(null)}>
          agentd
        </button>
        <span class="spacer" />
        <span class={`conn ${online.value ? "ok" : "down"}`} role="status">
          {online.value ? "Connected" : "Daemon unreachable, reconnecting…"}
        </span>
        <button type="button" onClick={() => (panel.value = panel.value === "settings" ? "none" : "settings")}>
          Settings
        </button>
        <form method="post" action="/logout">
          <button type="submit">Sign out</button>
        </form>
      </header>
      {!online.value && (
        <div class="offline" role="alert">
          The daemon is unreachable. Your draft is kept; the page reconnects when it is back.
        </div>
      )}
      <div class="layout">
        <Sidebar />
        {sidebarOpen.value && <div class="backdrop" aria-hidden="true" onClick={() => (sidebarOpen.value = false)} />}
        <main class="main">
          {panel.value === "settings" ? (
            <Settings />
          ) : panel.value === "new" ? (
            <NewSession />
          ) : id ? (
            <SessionView key={id} id={id} />
          ) : (
            <Home />
          )}
        </main>
      </div>
      <CommandPalette />
      {toast.value && (
        <div class="toast" role="status">
          {toast.value}
        </div>
      )}
    </div>
  );
}
