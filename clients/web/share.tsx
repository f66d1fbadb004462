/**
 * Sharing a session: what the link publishes, previewed before anything is published (the daemon renders the very
 * page the link shows), tool results off unless chosen, the link to copy, and "Stop sharing".
 */
import { useSignal } from "@preact/signals";
import { api, messageOf, ok } from "./api.js";
import type { SessionState } from "./session.js";
import { panel, showToast } from "./store.js";

export function SharePanel({ s }: { s: SessionState }) {
  const info = s.info.value;
  const toolResults = useSignal(info?.shareToolResults === true);
  const busy = useSignal(false);
  if (!info) return null;
  const id = { params: { path: { id: s.id } } };
  const token = info.shareToken;
  const url = token ? new URL(`/shared/${token}`, location.origin).href : null;
  const changed = token !== null && toolResults.value !== (info.shareToolResults === true);
  const run = async (fn: () => Promise<unknown>, done: string) => {
    busy.value = true;
    try {
      await fn();
      await s.reload();
      showToast(done);
    } catch (err) {
      showToast(messageOf(err));
    } finally {
      busy.value = false;
    }
  };
  const publish = () =>
    run(async () => {
      const r = await ok(api.POST("/api/v1/sessions/{id}/share", { ...id, body: { toolResults: toolResults.value } }));
      await navigator.clipboard?.writeText(new URL(r.url, location.origin).href).catch(() => undefined);
    }, "Link copied. Anyone with it can read this session.");
  const copy = () =>
    void navigator.clipboard
      ?.writeText(url ?? "")
      .then(() => showToast("Link copied"))
      .catch(() => showToast("Could not copy: select the link and copy it"));
  return (
    <section class="panel share-panel" aria-label="Share">
      <header class="panel-head">
        <h2>{token ? "Shared" : "Share"}</h2>
        <button type="button" onClick={() => (panel.value = "none")}>
          Close
        </button>
      </header>
      <p>
        {token ? "Anyone with this link can read" : "A link lets anyone who has it read"} this session: your messages,
        the agent's answers and the tool calls it made. The system prompt is never shown; local paths are shortened.
      </p>
      <label class="toggle">
        <input
          type="checkbox"
          checked={toolResults.value}
          onChange={(e) => (toolResults.value = e.currentTarget.checked)}
        />
        Include tool results (file contents, command output)
      </label>
      {url && (
        <div class="share-link">
          <input type="text" readOnly aria-label="Share link" value={url} onFocus={(e) => e.currentTarget.select()} />
          <button type="button" onClick={copy}>
            Copy link
          </button>
        </div>
      )}
      <div class="row">
        {!token && (
          <button type="button" class="primary" disabled={busy.value} onClick={() => void publish()}>
            Create link
          </button>
        )}
        {changed && (
          <button type="button" class="primary" disabled={busy.value} onClick={() => void publish()}>
            Update the shared page
          </button>
        )}
        {token && (
          <button
            type="button"
            class="danger"
            disabled={busy.value}
            onClick={() =>
              void run(() => ok(api.DELETE("/api/v1/sessions/{id}/share", id)), "Sharing stopped: the link is dead.")
            }
          >
            Stop sharing
          </button>
        )}
      </div>
      <h3>{token && !changed ? "What the link shows" : "Preview"}</h3>
      <iframe
        class="share-preview"
        title="Preview of the shared page"
        sandbox="allow-same-origin"
        src={`/api/v1/sessions/${encodeURIComponent(s.id)}/share-preview?toolResults=${toolResults.value ? 1 : 0}`}
      />
    </section>
  );
}
