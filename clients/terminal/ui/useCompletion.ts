/** Tab completion in the composer: @paths from the session's directory, slash commands from the daemon and local ones. */
import { useCallback } from "react";
import type { Api } from "../../api/client.js";
import type { Suggestion } from "./Composer.js";
import * as ed from "./editor.js";

const LOCAL_COMMANDS: Suggestion[] = [
  {
    label: "/exit",
    hint: "quit the client (the session stays in the daemon)",
    apply: () => ({ text: "/exit", cursor: 5 }),
  },
  { label: "/sessions", hint: "switch to another session", apply: () => ({ text: "/sessions", cursor: 9 }) },
  { label: "/new", hint: "start a new session in this directory", apply: () => ({ text: "/new", cursor: 4 }) },
];

export function useCompletion(api: Api, sessionId: string): (e: ed.Edit) => Promise<Suggestion[]> {
  return useCallback(
    async (e: ed.Edit): Promise<Suggestion[]> => {
      const at = ed.atToken(e);
      if (at) {
        const r = await api.GET("/api/v1/sessions/{id}/fs/search", {
          params: { path: { id: sessionId }, query: { q: at.query, limit: 8 } },
        });
        return (r.data?.results ?? []).map((hit) => {
          const value = hit.type === "dir" ? `${hit.path}/` : hit.path;
          return { label: `@${value}`, apply: (x: ed.Edit) => ed.replaceAt(x, at.start, value) };
        });
      }
      const local = LOCAL_COMMANDS.filter((c) => c.label.startsWith(e.text) && c.label !== e.text);
      const r = await api.GET("/api/v1/suggest", { params: { query: { q: e.text, session: sessionId } } });
      const remote = (r.data ?? [])
        .filter((s) => s.value !== e.text)
        .map((s) => ({
          label: s.value.trim(),
          hint: s.label,
          apply: () => ({ text: s.value, cursor: s.value.length }),
        }));
      return [...remote, ...local];
    },
    [api, sessionId],
  );
}
