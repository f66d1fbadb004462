/** Settings: provider (verified before saving), default permissions, turn cap, theme, reasoning, notifications. */
import { signal, useSignal } from "@preact/signals";
import { PROVIDER_PRESETS, presetById } from "../api/provider-presets.js";
import { api, messageOf, ok } from "./api.js";
import { PermissionsCard } from "./permissions.js";
import { applyTheme, config, daemonThemes, panel, showToast, theme } from "./store.js";

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
  const model = useSignal(c?.model ?? "");
  const note = useSignal<string | null>(null);
  const preset = useSignal("");
  const chosen = presetById(preset.value);
  // A preset fills in the URL ({…} parts are yours to replace); the daemon verifies the endpoint (and key) before it saves anything; a failure says why and keeps the old values.
  const save = async (e: Event) => {
    e.preventDefault();
    note.value = "Checking…";
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
      note.value = r.message;
      config.value = await ok(api.GET("/api/v1/config"));
    } catch (err) {
      note.value = `Not saved: ${messageOf(err)}`;
    }
  };
  return (
    <form class="card" aria-label="Provider" onSubmit={save}>
      <h3>Provider</h3>
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
        <input type="url" value={baseURL.value} onInput={(e) => (baseURL.value = e.currentTarget.value)} required />
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
      <label>
        Model
        <input type="text" value={model.value} onInput={(e) => (model.value = e.currentTarget.value)} />
      </label>
      <button type="submit" class="primary">
        Verify and save
      </button>
      {note.value && <p role="status">{note.value}</p>}
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
              // A daemon theme is also the daemon-wide default, so the other clients follow.
              if (daemonThemes.value.some((t) => t.id === theme.value)) void globalCommand(`/theme ${theme.value}`);
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
