/** "Rewind to here" on a user message: shows which files would change, then rewinds code and conversation. */
import { useState } from "preact/hooks";
import { api, messageOf, ok, type Schemas } from "./api.js";

type Preview = Schemas["RewindPreview"];

function FileList({ p }: { p: Preview }) {
  const rows = [
    ...p.modified.map((f) => [f, "restored"]),
    ...p.deleted.map((f) => [f, "recreated"]),
    ...p.created.map((f) => [f, "removed"]),
  ];
  if (!p.available) return <p class="rewind-note">Files cannot be restored: {p.reason}</p>;
  if (!rows.length) return <p class="rewind-note">No files would change.</p>;
  return (
    <ul class="rewind-files">
      {rows.map(([f, what]) => (
        <li key={f}>
          <code>{f}</code> {what}
        </li>
      ))}
    </ul>
  );
}

export function RewindControl({ sessionId, seq }: { sessionId: string; seq: number }) {
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const path = { params: { path: { id: sessionId } } };
  const open = async () => {
    setError(null);
    try {
      setPreview(
        await ok(
          api.GET("/api/v1/sessions/{id}/rewind", { params: { path: { id: sessionId }, query: { messageSeq: seq } } }),
        ),
      );
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const rewind = async (restore: "both" | "conversation") => {
    try {
      await ok(api.POST("/api/v1/sessions/{id}/rewind", { ...path, body: { messageSeq: seq, restore } }));
      setPreview(null);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  if (!preview) {
    return (
      <div class="rewind">
        <button type="button" class="rewind-open" onClick={() => void open()}>
          Rewind to here
        </button>
        {error && <p class="rewind-note">{error}</p>}
      </div>
    );
  }
  return (
    <fieldset class="rewind open" aria-label="Rewind">
      <FileList p={preview} />
      {preview.available && (
        <button type="button" onClick={() => void rewind("both")}>
          Rewind code and conversation
        </button>
      )}
      <button type="button" onClick={() => void rewind("conversation")}>
        Conversation only
      </button>
      <button type="button" onClick={() => setPreview(null)}>
        Cancel
      </button>
      {error && <p class="rewind-note">{error}</p>}
    </fieldset>
  );
}
