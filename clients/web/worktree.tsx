/**
 * The session's own git worktree: its branch in the header, the panel with the diff against the base and the Merge
 * control (a conflict lists its files), and Discard, which asks in a dialog of the page first.
 */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { type ApiCallError, api, messageOf, ok, type Schemas } from "./api.js";
import { ConfirmDialog } from "./confirm-dialog.js";
import { Panel } from "./panels.js";
import type { SessionState } from "./session.js";
import { loadSessions } from "./sidebar.js";
import { panel, showToast } from "./store.js";

type WorktreeInfo = Schemas["WorktreeInfo"];
type Diff = Schemas["WorktreeDiff"];

const STATUS: Record<string, string> = { A: "added", M: "modified", D: "deleted" };

/** The branch in the header: opens the worktree panel (the diff and Merge). */
export function BranchChip({ wt }: { wt: WorktreeInfo }) {
  return (
    <button
      type="button"
      class="branch-chip"
      title={`Worktree ${wt.path} of ${wt.repository}, branched from ${wt.base}`}
      aria-label={`Worktree branch ${wt.branch}, from ${wt.base}`}
      aria-pressed={panel.value === "worktree"}
      onClick={() => (panel.value = panel.value === "worktree" ? "none" : "worktree")}
    >
      <span aria-hidden="true">⎇</span> {wt.branch}
    </button>
  );
}

/** After a merge or a discard: the session (its directory, its worktree) and the list are read again. */
async function refresh(s: SessionState): Promise<void> {
  await s.reload();
  await loadSessions();
}

export function ConfirmDiscard({ s, onClose }: { s: SessionState; onClose: () => void }) {
  const wt = s.info.value?.worktree;
  if (!wt) return null;
  const discard = () => {
    onClose();
    void ok(api.DELETE("/api/v1/sessions/{id}/worktree", { params: { path: { id: s.id } } }))
      .then((r) => {
        if (panel.value === "worktree") panel.value = "none";
        showToast(`Worktree discarded; the session works in ${r.cwd} again.`);
        return refresh(s);
      })
      .catch((e) => showToast(messageOf(e)));
  };
  return (
    <ConfirmDialog
      id="confirm-discard-title"
      title="Discard this worktree?"
      action="Discard worktree"
      onCancel={onClose}
      onConfirm={discard}
    >
      <p>
        The worktree <code>{wt.path}</code> and its branch <code>{wt.branch}</code> are removed, with all the work in
        them that was not merged. The session goes back to <code>{wt.repository}</code>.
      </p>
    </ConfirmDialog>
  );
}

/** The patch cut into one part per file (a `diff --git` line starts each). */
function byFile(patch: string): Map<string, string[]> {
  const parts = new Map<string, string[]>();
  let cur: string[] | undefined;
  for (const line of patch.split("\n")) {
    const head = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
    if (head) {
      cur = [];
      parts.set(head[2] as string, cur);
    } else if (cur && !/^(index |--- |\+\+\+ |new file mode|deleted file mode)/.test(line)) cur.push(line);
  }
  return parts;
}

function lineClass(l: string): string {
  if (l.startsWith("@@")) return "hunk";
  if (l.startsWith("+")) return "add";
  if (l.startsWith("-")) return "del";
  return "";
}

function DiffView({ d }: { d: Diff }) {
  const parts = byFile(d.patch);
  if (!d.files.length) return <p class="muted">No changes against {d.worktree.base} yet: nothing to merge.</p>;
  return (
    <section aria-label={`Changes against ${d.worktree.base}`}>
      {d.files.map((f) => (
        <details key={f.path} class="card" open={d.files.length < 6}>
          <summary>
            <code>{f.path}</code>{" "}
            <span class={`file-status ${STATUS[f.status] ?? ""}`}>{STATUS[f.status] ?? f.status}</span>
          </summary>
          <pre class="diff">
            {(parts.get(f.path) ?? []).map((l, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a patch's lines never move; the position is their identity
              <div key={i} class={lineClass(l)}>
                {l}
              </div>
            ))}
          </pre>
        </details>
      ))}
      {d.truncated && <p class="muted">The diff is cut here (it is longer than 512 KiB).</p>}
    </section>
  );
}

/** The paths a refused merge names: files in conflict, or the main checkout's uncommitted changes in the way. */
function Refusal({ err }: { err: ApiCallError }) {
  const paths = err.body?.paths ?? [];
  const why =
    err.body?.code === "merge_conflict"
      ? "The merge was refused: these files conflict. Nothing was changed."
      : err.body?.code === "checkout_dirty"
        ? "The merge was refused: the main checkout has uncommitted changes to these files."
        : err.message;
  return (
    <div class="merge-refused" role="alert">
      <p>{why}</p>
      {paths.length > 0 && (
        <ul aria-label="Conflicting files">
          {paths.map((p) => (
            <li key={p}>
              <code>{p}</code>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function WorktreePanel({ s }: { s: SessionState }) {
  const diff = useSignal<Diff | null>(null);
  const error = useSignal<string | null>(null);
  const refused = useSignal<ApiCallError | null>(null);
  const merging = useSignal(false);
  const discarding = useSignal(false);
  const wt = s.info.value?.worktree;
  const id = { params: { path: { id: s.id } } };
  const load = () =>
    void ok(api.GET("/api/v1/sessions/{id}/worktree", id))
      .then((d) => {
        diff.value = d;
        error.value = null;
      })
      .catch((e) => (error.value = messageOf(e)));
  useEffect(load, [s, wt?.path]);
  const merge = async () => {
    merging.value = true;
    refused.value = null;
    try {
      const r = await ok(api.POST("/api/v1/sessions/{id}/worktree/merge", id));
      const how = r.fastForward ? "fast-forward" : "merge commit";
      showToast(r.merged ? `Merged into ${wt?.base} (${how}, ${r.files.length} file(s)).` : "Nothing to merge.");
      load();
      await refresh(s);
    } catch (e) {
      if ((e as ApiCallError).status === 409) refused.value = e as ApiCallError;
      else showToast(messageOf(e));
    } finally {
      merging.value = false;
    }
  };
  return (
    <Panel title="Worktree">
      {!wt ? (
        <p class="muted">This session works in the main checkout, not in a worktree of its own.</p>
      ) : (
        <>
          <p class="muted">
            Branch <strong>{wt.branch}</strong> from <strong>{wt.base}</strong> of <code>{wt.repository}</code>
          </p>
          <div class="row">
            <button
              type="button"
              class="primary"
              disabled={merging.value || !diff.value?.files.length}
              onClick={() => void merge()}
            >
              {merging.value ? "Merging…" : `Merge into ${wt.base}`}
            </button>
            <button type="button" class="danger" onClick={() => (discarding.value = true)}>
              Discard worktree
            </button>
          </div>
          {refused.value && <Refusal err={refused.value} />}
          {error.value && <p class="form-error">{error.value}</p>}
          {!diff.value && !error.value && (
            <p class="muted" role="status">
              Reading the changes…
            </p>
          )}
          {diff.value && <DiffView d={diff.value} />}
          {discarding.value && <ConfirmDiscard s={s} onClose={() => (discarding.value = false)} />}
        </>
      )}
    </Panel>
  );
}
