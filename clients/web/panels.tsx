/** Side panels: a new session (directory picker, persona, model), the working-tree changes, the session's inputs. */
import { useSignal } from "@preact/signals";
import type { ComponentChildren } from "preact";
import { useEffect } from "preact/hooks";
import { api, messageOf, ok, type Schemas } from "./api.js";
import { ModelInput } from "./models.js";
import type { SessionState } from "./session.js";
import { loadSessions } from "./sidebar.js";
import { chosenModel, config, panel, select, showToast } from "./store.js";

export function Close() {
  return (
    <button type="button" onClick={() => (panel.value = "none")}>
      Close
    </button>
  );
}

/** A side panel: its title, Close, and what it shows. */
export function Panel({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section class="panel" aria-label={title}>
      <header class="panel-head">
        <h2>{title}</h2>
        <Close />
      </header>
      {children}
    </section>
  );
}

export function NewSession() {
  const cwd = useSignal(config.value?.cwd ?? "");
  const listing = useSignal<Schemas["BrowseListing"] | null>(null);
  const cwdError = useSignal<string | null>(null);
  const creating = useSignal(false);
  const personas = useSignal<Schemas["Persona"][]>([]);
  const persona = useSignal(config.value?.persona ?? "");
  const model = useSignal(chosenModel());
  const inWorktree = useSignal(false);
  const branch = useSignal("");
  /** Lists a directory; the field takes its resolved path only when the user picked it (not while typing). */
  const browse = async (path: string | undefined, take: boolean) => {
    try {
      const l = await ok(api.GET("/api/v1/browse", { params: { query: path ? { path } : {} } }));
      listing.value = l;
      cwdError.value = null;
      if (take) cwd.value = l.path;
      return l;
    } catch (err) {
      cwdError.value = messageOf(err);
      return null;
    }
  };
  useEffect(() => {
    void browse(cwd.value || undefined, !cwd.value);
    void ok(api.GET("/api/v1/personas"))
      .then((p) => (personas.value = p))
      .catch(() => undefined);
  }, []);
  // The typed path is the one used: it is checked (it must be a readable directory) before anything is created.
  const create = async (e: Event) => {
    e.preventDefault();
    if (creating.value) return;
    creating.value = true;
    try {
      const typed = cwd.value.trim();
      const checked = typed ? await browse(typed, true) : null;
      if (typed && !checked) return;
      const r = await ok(
        api.POST("/api/v1/sessions", {
          body: {
            cwd: checked?.path,
            persona: persona.value || undefined,
            model: model.value || undefined,
            ...(inWorktree.value ? { worktree: branch.value.trim() ? { branch: branch.value.trim() } : true } : {}),
          },
        }),
      );
      panel.value = "none";
      await loadSessions();
      select(r.id);
    } catch (err) {
      cwdError.value = messageOf(err);
    } finally {
      creating.value = false;
    }
  };
  const l = listing.value;
  return (
    <form class="panel" aria-label="New session" onSubmit={create}>
      <header class="panel-head">
        <h2>New session</h2>
        <Close />
      </header>
      <label>
        Working directory
        <input
          type="text"
          value={cwd.value}
          spellcheck={false}
          autocomplete="off"
          aria-invalid={cwdError.value ? true : undefined}
          aria-describedby={cwdError.value ? "cwd-error" : undefined}
          onInput={(e) => {
            cwd.value = e.currentTarget.value;
            cwdError.value = null;
          }}
          onChange={(e) => void browse(e.currentTarget.value.trim() || undefined, false)}
        />
      </label>
      {cwdError.value && (
        <p id="cwd-error" class="form-error" role="alert">
          {cwdError.value}
        </p>
      )}
      {l && (
        <div class="browser">
          <div class="browse-head">
            <span class="muted" title={l.path}>
              {l.path}
            </span>
            {l.roots.map((r) => (
              <button key={r} type="button" class="link" onClick={() => void browse(r, true)}>
                {r}
              </button>
            ))}
          </div>
          <ul class="browse" aria-label="Folders">
            {l.parent && (
              <li>
                <button type="button" class="link" onClick={() => void browse(l.parent ?? undefined, true)}>
                  ..
                </button>
              </li>
            )}
            {l.entries
              .filter((x) => x.type === "dir")
              .slice(0, 200)
              .map((x) => (
                <li key={x.path}>
                  <button type="button" class="link" onClick={() => void browse(x.path, true)}>
                    {x.name}/
                  </button>
                </li>
              ))}
            {!l.entries.some((x) => x.type === "dir") && <li class="muted">No folders here.</li>}
          </ul>
        </div>
      )}
      <label>
        Persona
        <select value={persona.value} onChange={(e) => (persona.value = e.currentTarget.value)}>
          {personas.value.map((p) => (
            <option key={p.name} value={p.name}>
              {p.label}
            </option>
          ))}
        </select>
      </label>
      <ModelInput label="Model" value={model.value} onChange={(v) => (model.value = v)} />
      <label class="option">
        <input
          type="checkbox"
          checked={inWorktree.value}
          onChange={(e) => (inWorktree.value = e.currentTarget.checked)}
        />
        In a new worktree <span class="muted">(a git worktree and branch of its own, merged back when done)</span>
      </label>
      {inWorktree.value && (
        <label>
          Branch
          <input
            type="text"
            value={branch.value}
            placeholder="agentd/<session id>"
            spellcheck={false}
            autocomplete="off"
            onInput={(e) => (branch.value = e.currentTarget.value)}
          />
        </label>
      )}
      <button type="submit" class="primary" disabled={creating.value}>
        {creating.value ? "Creating…" : "Create session"}
      </button>
    </form>
  );
}

export function Changes({ s }: { s: SessionState }) {
  const diff = useSignal<Schemas["WorkingTreeDiff"] | null>(null);
  const git = useSignal<Schemas["GitInfo"] | null>(null);
  const error = useSignal<string | null>(null);
  useEffect(() => {
    const id = { params: { path: { id: s.id } } };
    void ok(api.GET("/api/v1/sessions/{id}/diff", id))
      .then((d) => (diff.value = d))
      .catch((e) => (error.value = messageOf(e)));
    void ok(api.GET("/api/v1/git-info", { params: { query: { cwd: s.info.value?.cwd ?? "" } } }))
      .then((g) => (git.value = g))
      .catch(() => undefined);
  }, [s]);
  const g = git.value;
  return (
    <Panel title="Changes">
      {g?.isGit && (
        <p class="muted">
          Branch <strong>{g.branch ?? "(detached)"}</strong>
          {g.dirty && ` · ${g.dirty.staged} staged, ${g.dirty.unstaged} unstaged, ${g.dirty.untracked} untracked`}
        </p>
      )}
      {error.value && <p class="form-error">{error.value}</p>}
      {!diff.value && !error.value && (
        <p class="muted" role="status">
          Reading the working tree…
        </p>
      )}
      {diff.value?.noRepo && <p class="muted">{diff.value.reason ?? "Not a git repository."}</p>}
      {diff.value?.files.length === 0 && !diff.value.noRepo && <p class="muted">No changes.</p>}
      {diff.value?.files.map((f) => (
        <details key={f.path} class="card" open={(diff.value?.files.length ?? 0) < 6}>
          <summary>
            <code>{f.oldPath ? `${f.oldPath} → ${f.path}` : f.path}</code>{" "}
            {f.status !== "modified" && <span class={`file-status ${f.status}`}>{f.status}</span>}{" "}
            <span class="add">+{f.additions}</span> <span class="del">-{f.deletions}</span>
            {f.binary && <span class="muted"> · binary</span>}
          </summary>
          <pre class="diff">
            {f.hunks.map((h) => (
              <div key={h.header}>
                <div class="hunk">{h.header}</div>
                {h.lines.map((l, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: a hunk's lines never move; the position is their identity
                  <div key={i} class={l.type === "+" ? "add" : l.type === "-" ? "del" : ""}>
                    {l.type} {l.content}
                  </div>
                ))}
              </div>
            ))}
          </pre>
        </details>
      ))}
    </Panel>
  );
}

export function Files({ s }: { s: SessionState }) {
  const list = useSignal<Schemas["AttachmentList"] | null>(null);
  const id = { path: { id: s.id } };
  const load = () =>
    void ok(api.GET("/api/v1/sessions/{id}/inputs", { params: id }))
      .then((l) => (list.value = l))
      .catch((e) => showToast(messageOf(e)));
  useEffect(load, [s]);
  const remove = async (name: string) => {
    await ok(api.DELETE("/api/v1/sessions/{id}/inputs", { params: { ...id, query: { name } } })).catch((e) =>
      showToast(messageOf(e)),
    );
    load();
  };
  const rename = async (name: string) => {
    const to = prompt("New name", name);
    if (!to || to === name) return;
    await ok(
      api.POST("/api/v1/sessions/{id}/fs/rename", { params: id, body: { path: `inputs/${name}`, name: to } }),
    ).catch((e) => showToast(messageOf(e)));
    load();
  };
  return (
    <Panel title="Attachments">
      {list.value?.entries.length === 0 && <p class="muted">No attachments yet.</p>}
      <ul class="files">
        {list.value?.entries.map((f) => (
          <li key={f.name}>
            <a
              href={`/api/v1/sessions/${encodeURIComponent(s.id)}/inputs/download?name=${encodeURIComponent(f.name)}`}
              download={f.name}
            >
              {f.name}
            </a>{" "}
            <span class="muted">{Math.ceil(f.size / 1024)} KB</span>
            <button type="button" onClick={() => void rename(f.name)}>
              Rename
            </button>
            <button type="button" class="danger" onClick={() => void remove(f.name)}>
              Delete
            </button>
          </li>
        ))}
      </ul>
    </Panel>
  );
}
