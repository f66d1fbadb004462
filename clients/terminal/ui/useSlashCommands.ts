/** Slash commands the daemon runs (POST /sessions/{id}/command): their replies as notes, /rewind's picker, /fork. */
import { useCallback, useState } from "react";
import type { Api } from "../../api/client.js";
import { refusal, worktreeReply } from "../worktree.js";
import type { RewindChoice } from "./RewindPicker.js";
import type { SessionView } from "./store.js";

export const LOCAL_HELP =
  "This client also has: /sessions (switch session), /new (new session here), /provider presets (and /provider " +
  "preset <id> [part…] [key=K] [model=M]: set the endpoint, verified first), /exit. Keys: Enter sends (steers while " +
  "a turn runs; Ctrl+T queues instead), Alt+Enter or Ctrl+J new line, Tab completes, Esc aborts, Ctrl+O thinking, " +
  "Ctrl-C twice quits.";

export function useSlashCommands(api: Api, sessionId: string, store: SessionView, switchTo: (id: string) => void) {
  const [rewindChoices, setRewindChoices] = useState<RewindChoice[] | undefined>();

  const runCommand = useCallback(
    async (line: string) => {
      const r = await api.POST("/api/v1/sessions/{id}/command", {
        params: { path: { id: sessionId } },
        body: { command: line },
      });
      if (!r.data) return store.note(refusal(r.error as never, r.response.status), "error");
      const reply = r.data;
      const data = (reply.data ?? {}) as Record<string, unknown>;
      if (reply.command === "/rewind" && Array.isArray(data.choices)) {
        if (data.choices.length) return setRewindChoices(data.choices as RewindChoice[]);
      }
      // A rewind and its /redo are told by the redrawn transcript (the session's rewind event).
      if ((reply.command === "/rewind" || reply.command === "/redo") && typeof data.action === "string") return;
      const sub = line.split(/\s+/)[1] ?? "list";
      if (reply.command === "/worktree") store.note(worktreeReply(sub, data, reply.message ?? ""), "info");
      else if (reply.message) store.note(reply.message, "info");
      if (reply.command === "/help") store.note(LOCAL_HELP, "info");
      const forked = reply.data?.sessionId;
      if (reply.command === "/fork" && typeof forked === "string") switchTo(forked);
    },
    [api, sessionId, store, switchTo],
  );

  const closeRewind = useCallback(() => setRewindChoices(undefined), []);

  return { runCommand, rewindChoices, closeRewind };
}
