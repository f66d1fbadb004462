/** What the terminal says about a rewind: the files a rewind would change, and what one (or its /redo) did. */

export const RESTORE_CHOICES = [
  {
    value: "both",
    label: "code and conversation",
    hint: "the files as before that turn; the message and all after it go",
  },
  { value: "code", label: "code only", hint: "the files as before that turn; the conversation stays" },
  { value: "conversation", label: "conversation only", hint: "the message and all after it go; the files stay" },
] as const;

export type RestoreChoice = (typeof RESTORE_CHOICES)[number]["value"];

/** `GET /sessions/{id}/rewind?messageSeq=N`. */
export interface RewindPreview {
  available: boolean;
  reason?: string;
  created: string[];
  modified: string[];
  deleted: string[];
}

const list = (files: string[], max = 6) =>
  files.length > max ? `${files.slice(0, max).join(", ")} and ${files.length - max} more` : files.join(", ");

/** The lines shown above the restore choices: which files a code rewind would change, or why it cannot. */
export function previewLines(p: RewindPreview): string[] {
  if (!p.available) return [`The files cannot be restored: ${p.reason ?? "no checkpoint"}`];
  const lines = [
    p.modified.length ? `restored: ${list(p.modified)}` : "",
    p.deleted.length ? `recreated: ${list(p.deleted)}` : "",
    p.created.length ? `removed: ${list(p.created)}` : "",
  ].filter(Boolean);
  return lines.length ? lines : ["No file would change."];
}

/** One line about a `rewind` or `redo` event of the session's stream. */
export function describeRewind(ev: Record<string, unknown>): string {
  const restored = Array.isArray(ev.restored) ? ev.restored.map(String) : [];
  const removed = Array.isArray(ev.removed) ? ev.removed.map(String) : [];
  const files = ev.filesRestored
    ? [restored.length ? `restored ${list(restored)}` : "", removed.length ? `removed ${list(removed)}` : ""]
        .filter(Boolean)
        .join("; ") || "no file changed"
    : "files unchanged";
  if (ev.type === "redo") return `rewind undone (${String(ev.restore)}): ${files}`;
  return `rewound to message ${String(ev.fromSeq)} (${String(ev.restore)}): ${files} · /redo undoes it`;
}
