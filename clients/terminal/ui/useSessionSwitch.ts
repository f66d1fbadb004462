/** Which session the client shows, and the picker that switches to another one (/sessions, /new, /fork). */
import { useCallback, useState } from "react";
import { type Api, ok, type Schemas } from "../../api/client.js";
import type { SessionView } from "./store.js";

export function useSessionSwitch(first: string, api: Api, store: SessionView) {
  const [sessionId, setSessionId] = useState(first);
  const [picker, setPicker] = useState<Schemas["SessionSummary"][] | undefined>();

  const switchTo = useCallback(
    (id: string) => {
      if (id === sessionId) return;
      store.note(`switching to session ${id}`, "info");
      setSessionId(id);
    },
    [sessionId, store],
  );

  const openPicker = useCallback(async () => {
    const page = (await ok(
      api.GET("/api/v1/sessions", { params: { query: { limit: 30 } } }),
    )) as Schemas["SessionPage"];
    setPicker(page.sessions);
  }, [api]);

  const closePicker = useCallback(() => setPicker(undefined), []);

  return { sessionId, switchTo, picker, openPicker, closePicker };
}
