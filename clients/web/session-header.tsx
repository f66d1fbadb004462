/**
 * The open session's header: its title (renamed in place), directory and model, and its actions. At phone width the
 * less used actions sit in a "⋯" menu, so the header keeps to one row. Deleting asks in a dialog of the page.
 */
import { useSignal } from "@preact/signals";
import { api, messageOf, ok } from "./api.js";
import { ConfirmDialog } from "./confirm-dialog.js";
import type { SessionState } from "./session.js";
import { loadSessions, titleOf } from "./sidebar.js";
import { modelLabel, panel, select, showToast } from "./store.js";
import { BranchChip, ConfirmDiscard } from "./worktree.js";

interface Action {
  label: string;
  run: () => void;
  pressed?: boolean;
  danger?: boolean;
  /** Stays in the header at phone width (the rest go into the menu). */
  keep?: boolean;
}

export function SessionHeader({ s }: { s: SessionState }) {
  const renaming = useSignal(false);
  const confirming = useSignal(false);
  const menu = useSignal(false);
  const discarding = useSignal(false);
  const info = s.info.value;
  if (!info) return null;
  const id = { params: { path: { id: s.id } } };
  const act = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
      await s.reload();
      await loadSessions();
    } catch (err) {
      showToast(messageOf(err));
    }
  };
  const toggle = (p: "changes" | "files" | "share" | "worktree") => (panel.value = panel.value === p ? "none" : p);
  const actions: Action[] = [
    { label: "Rename", run: () => (renaming.value = true) },
    {
      label: info.pinned ? "Unpin" : "Pin",
      pressed: Boolean(info.pinned),
      run: () => void act(() => ok(api.POST("/api/v1/sessions/{id}/pin", { ...id, body: { pinned: !info.pinned } }))),
    },
    {
      label: "Fork",
      run: () =>
        void ok(api.POST("/api/v1/sessions/{id}/fork", id))
          .then((r) => loadSessions().then(() => select(r.id)))
          .catch((e) => showToast(messageOf(e))),
    },
    { label: info.shareToken ? "Shared" : "Share", pressed: panel.value === "share", run: () => toggle("share") },
    { label: "Changes", pressed: panel.value === "changes", run: () => toggle("changes"), keep: true },
    { label: "Attachments", pressed: panel.value === "files", run: () => toggle("files") },
    ...(info.worktree
      ? [
          { label: "Merge…", pressed: panel.value === "worktree", run: () => toggle("worktree") },
          { label: "Discard worktree", danger: true, run: () => (discarding.value = true) },
        ]
      : []),
    { label: "Delete", danger: true, run: () => (confirming.value = true) },
  ];
  const remove = () =>
    void ok(api.DELETE("/api/v1/sessions/{id}/permanent", id))
      .then(() => {
        select(null);
        return loadSessions();
      })
      .catch((e) => showToast(messageOf(e)));
  return (
    <header class="session-head">
      {renaming.value ? (
        <form
          class="rename"
          onSubmit={(e) => {
            e.preventDefault();
            const title = (new FormData(e.currentTarget).get("title") as string).trim();
            renaming.value = false;
            if (title !== (info.title ?? ""))
              void act(() => ok(api.POST("/api/v1/sessions/{id}/rename", { ...id, body: { title } })));
          }}
        >
          <input
            name="title"
            aria-label="Session title"
            value={info.title ?? ""}
            placeholder={titleOf({ ...info, title: "" })}
            ref={(el) => el?.focus()}
            onKeyDown={(e) => {
              if (e.key === "Escape") renaming.value = false;
            }}
          />
          <button type="submit" class="primary">
            Save
          </button>
          <button type="button" onClick={() => (renaming.value = false)}>
            Cancel
          </button>
        </form>
      ) : (
        <h1 class="session-title" title="Double-click to rename" onDblClick={() => (renaming.value = true)}>
          {titleOf(info)}
        </h1>
      )}
      <span class="muted cwd" title={info.cwd}>
        {info.cwd} · {modelLabel(info.model)}
      </span>
      {info.worktree && <BranchChip wt={info.worktree} />}
      <div class="actions" role="toolbar" aria-label="Session actions">
        {actions.map((a) => (
          <button
            key={a.label}
            type="button"
            class={`${a.danger ? "danger " : ""}${a.keep ? "keep" : "spare"}`}
            aria-pressed={a.pressed}
            onClick={a.run}
          >
            {a.label}
          </button>
        ))}
        <span class="more-wrap">
          <button
            type="button"
            class="more"
            aria-label="More session actions"
            aria-haspopup="menu"
            aria-expanded={menu.value}
            onClick={() => (menu.value = !menu.value)}
          >
            ⋯
          </button>
          {menu.value && (
            <div class="more-menu" role="menu" aria-label="Session actions menu">
              {actions
                .filter((a) => !a.keep)
                .map((a) => (
                  <button
                    key={a.label}
                    type="button"
                    role="menuitem"
                    class={a.danger ? "danger" : undefined}
                    onClick={() => {
                      menu.value = false;
                      a.run();
                    }}
                  >
                    {a.label}
                  </button>
                ))}
            </div>
          )}
        </span>
      </div>
      {confirming.value && (
        <ConfirmDialog
          id="confirm-delete-title"
          title="Delete this session?"
          action="Delete session"
          onCancel={() => (confirming.value = false)}
          onConfirm={() => {
            confirming.value = false;
            remove();
          }}
        >
          <p>Its messages and attachments are removed for good. Files it changed in the project stay as they are.</p>
        </ConfirmDialog>
      )}
      {discarding.value && <ConfirmDiscard s={s} onClose={() => (discarding.value = false)} />}
    </header>
  );
}
