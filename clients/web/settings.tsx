/** Settings: provider (verified before saving), default permissions, turn cap, theme, reasoning, notifications. */
import { signal, useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { PROVIDER_PRESETS, presetById } from "../api/provider-presets.js";
import { api, messageOf, ok } from "./api.js";
import { loadModels, ModelInput } from "./models.js";
import { PermissionsCard } from "./permissions.js";
import { applyTheme, chosenModel, config, daemonThemes, focusProvider, panel, showToast, theme } from "./store.js";

export const showReasoning = signal(true);

/** The page's own palettes, offered while the daemon's themes are not loaded. */
const FALLBACK_THEMES = [
  { id: "light", label: "Light" },
  { id: "dark", label: "Dark" },
];

async function globalCommand(command: string): Promise<void> {
  try {
    const r = await ok(api.POST("/api/v1/settings/command", { body: { command } }));
    showToast(r.message || `${command}: done`);
    config.value = await ok(api.GET("/api/v1/config"));
  } catch (err) {
    showToast(messageOf(err));
  }
}

function ProviderForm() {
  const c = config.value;
  const baseURL = useSignal(c?.baseURL ?? "");
  const apiKey = useSignal("");
  const model = useSignal(chosenModel());
  const note = useSignal<{ text: string; tone: "busy" | "ok" | "error" } | null>(null);
  const first = useRef<HTMLInputElement>(null);
  const preset = useSignal("");
  const chosen = presetById(preset.value);
  useEffect(() => {
    if (!focusProvider.peek()) return;
    focusProvider.value = false;
    first.current?.focus();
    first.current?.scrollIntoView({ block: "center" });
  }, []);
  // The daemon verifies the endpoint (and key) before it saves anything; a failure says why and keeps the old values.
  const save = async (e: Event) => {
    e.preventDefault();
    note.value = { text: "Checking the endpoint…", tone: "busy" };
    try {
      const r = await ok(
        api.PUT("/api/v1/settings/provider", {
          body: {
            baseURL: baseURL.value.trim(),
            ...(apiKey.value ? { apiKey: apiKey.value } : {}),
            ...(model.value.trim() ? { model: model.value.trim() } : {}),
          },
        }),
      );
      apiKey.value = "";
      note.value = { text: r.message, tone: "ok" };
      config.value = await ok(api.GET("/api/v1/config"));
      void loadModels(true);
    } catch (err) {
      note.value = { text: `Not saved: ${messageOf(err)}`, tone: "error" };
    }
  };
  return (
    <form class="card" aria-label="Provider" onSubmit={save}>
      <h3>Provider</h3>
      {!c?.providerConfigured && (
        <p class="muted">
          No model is connected yet. Enter an OpenAI-compatible endpoint (and its API key); it is checked before it is
          saved.
        </p>
      )}
      <label>
        Preset
        <select
          value={preset.value}
          onChange={(e) => {
            preset.value = e.currentTarget.value;
            const p = presetById(preset.value);
            if (p) baseURL.value = p.baseURL;
          }}
        >
          <option value="">Custom</option>
          {PROVIDER_PRESETS.map((p) => (
            <option key={p.id} value={p.id}>
              {p.label} ({p.needsKey ? "API key" : "no key"})
            </option>
          ))}
        </select>
      </label>
      <label>
        Base URL
        <input
          ref={first}
          type="url"
          placeholder="https://api.openai.com/v1"
          value={baseURL.value}
          onInput={(e) => (baseURL.value = e.currentTarget.value)}
          required
        />
      </label>
      <label>
        API key
        <input
          type="password"
          autocomplete="off"
          placeholder={c?.hasApiKey ? "(unchanged)" : chosen && !chosen.needsKey ? "(not needed)" : ""}
          value={apiKey.value}
          onInput={(e) => (apiKey.value = e.currentTarget.value)}
        />
      </label>
      <ModelInput label="Model" value={model.value} onChange={(v) => (model.value = v)} />
      <button type="submit" class="primary">
        Verify and save
      </button>
      {note.value && (
        <p role="status" class={`note ${note.value.tone}`}>
          {note.value.text}
        </p>
      )}
    </form>
  );
}

export function Settings() {
  const c = config.value;
  const turnCap = useSignal(c ? String(c.maxTurnIterations) : "");
  const setReasoning = async (on: boolean) => {
    showReasoning.value = on;
    await ok(api.POST("/api/v1/settings/appearance", { body: { showReasoning: on } })).catch((e) =>
      showToast(messageOf(e)),
    );
  };
  return (
    <section class="panel" aria-label="Settings">
      <header class="panel-head">
        <h2>Settings</h2>
        <button type="button" onClick={() => (panel.value = "none")}>
          Close
        </button>
      </header>
      <ProviderForm />
      <div class="card">
        <h3>Agent</h3>
        <label>
          Default permissions
          <select
            aria-label="Default permissions"
            value={c?.permissionMode ?? "default"}
            onChange={(e) => void globalCommand(`/permissions ${e.currentTarget.value}`)}
          >
            <option value="default">Ask before risky commands</option>
            <option value="bypass">Never ask (bypass)</option>
          </select>
        </label>
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (turnCap.value) void globalCommand(`/turn-cap ${turnCap.value}`);
          }}
        >
          <label>
            Turn cap
            <input
              type="number"
              min={10}
              max={10000}
              value={turnCap.value}
              onInput={(e) => (turnCap.value = e.currentTarget.value)}
            />
          </label>
          <button type="submit">Set</button>
        </form>
        <label class="toggle">
          <input
            type="checkbox"
            checked={showReasoning.value}
            onChange={(e) => void setReasoning(e.currentTarget.checked)}
          />
          Show reasoning
        </label>
      </div>
      <PermissionsCard />
      <div class="card">
        <h3>Appearance</h3>
        <label>
          Theme
          <select
            aria-label="Theme"
            value={theme.value}
            onChange={(e) => {
              theme.value = e.currentTarget.value;
              localStorage.setItem("agentd.theme", theme.value);
              applyTheme();
              // A daemon theme is also the daemon-wide default, so the other clients follow; "System" clears it.
              if (daemonThemes.value.some((t) => t.id === theme.value)) void globalCommand(`/theme ${theme.value}`);
              else if (theme.value === "system" && config.value?.settings.theme?.source === "settings")
                void globalCommand("/theme system");
            }}
          >
            <option value="system">System</option>
            {(daemonThemes.value.length > 0 ? daemonThemes.value : FALLBACK_THEMES).map((t) => (
              <option key={t.id} value={t.id}>
                {t.label}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          onClick={() => void Notification.requestPermission().then((p) => showToast(`Notifications: ${p}`))}
        >
          Enable notifications
        </button>
      </div>
    </section>
  );
}
