/**
 * `/rewind` without arguments: pick one of the session's user messages, then what to restore (with the files a
 * code rewind would change). The rewind itself is drawn from the session's `rewind` event (store.ts), so a rewind
 * made by another client shows the same way.
 */
import { Text } from "ink";
import { useEffect, useState } from "react";
import { ok } from "../../api/client.js";
import type { DaemonConnection } from "../../api/daemon.js";
import { previewLines, RESTORE_CHOICES, type RestoreChoice, type RewindPreview } from "../rewind.js";
import type { KeyRoute } from "./keys.js";
import { Picker } from "./Picker.js";

export interface RewindChoice {
  seq: number;
  text: string;
}

export interface RewindPickerProps {
  keys: KeyRoute;
  api: DaemonConnection["api"];
  sessionId: string;
  /** The session's user messages, oldest first (the daemon's `/rewind` reply). */
  choices: RewindChoice[];
  /** Closes the picker; `error` is what to say when the rewind was refused. */
  onDone(error?: string): void;
}

const oneLine = (s: string, max = 70) => {
  const line = s.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line || "(empty)";
};

export function RewindPicker(props: RewindPickerProps) {
  const { api, sessionId } = props;
  const [seq, setSeq] = useState<number | undefined>();
  const [preview, setPreview] = useState<RewindPreview | undefined>();
  const [busy, setBusy] = useState(false);
  const path = { path: { id: sessionId } };

  useEffect(() => {
    if (seq === undefined) return;
    let live = true;
    const params = { path: { id: sessionId }, query: { messageSeq: seq } };
    ok(api.GET("/api/v1/sessions/{id}/rewind", { params })).then(
      (p) => live && setPreview(p),
      (e: unknown) =>
        live && setPreview({ available: false, reason: String(e), created: [], modified: [], deleted: [] }),
    );
    return () => {
      live = false;
    };
  }, [api, seq, sessionId]);

  const restore = (mode: RestoreChoice) => {
    if (seq === undefined || busy) return;
    setBusy(true);
    ok(api.POST("/api/v1/sessions/{id}/rewind", { params: path, body: { messageSeq: seq, restore: mode } })).then(
      () => props.onDone(),
      (e: unknown) => props.onDone(`rewind refused: ${e instanceof Error ? e.message : String(e)}`),
    );
  };

  if (seq === undefined) {
    return (
      <Picker
        key="message"
        keys={props.keys}
        title="Rewind to which of your messages? (the most recent first)"
        items={[...props.choices].reverse().map((c) => ({
          label: oneLine(c.text),
          value: String(c.seq),
          hint: `message ${c.seq}`,
        }))}
        onSubmit={([v]) => setSeq(Number(v))}
        onCancel={() => props.onDone()}
      />
    );
  }
  if (!preview || busy) {
    props.keys.current = () => {};
    return <Text dimColor>{busy ? `rewinding to message ${seq}…` : "reading which files would change…"}</Text>;
  }
  const modes = RESTORE_CHOICES.filter((c) => preview.available || c.value === "conversation");
  return (
    <Picker
      key="restore"
      keys={props.keys}
      title={`Rewind to message ${seq}: restore what?`}
      detail={previewLines(preview)}
      items={modes.map((c) => ({ label: c.label, value: c.value, hint: c.hint }))}
      onSubmit={([v]) => restore(v as RestoreChoice)}
      onCancel={() => props.onDone()}
    />
  );
}
