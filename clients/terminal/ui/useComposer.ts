/**
 * What Enter does with the composer's text: a local command, a daemon command, a steer or queued follow-up while a
 * turn runs, or a new turn. Text typed before the stream is live (or while trust is undecided) waits; a message the
 * daemon did not take goes back into the input.
 */
import { randomUUID } from "node:crypto";
import { useCallback, useEffect, useRef, useState } from "react";
import { type Api, ok } from "../../api/client.js";
import type { InputHistory } from "../history.js";
import { parsePresetCommand } from "../provider-preset.js";
import type { SessionView } from "./store.js";

export interface ComposerDeps {
  api: Api;
  store: SessionView;
  sessionId: string;
  history: InputHistory;
  firstPrompt?: string;
  ready: boolean;
  live: boolean;
  link: "open" | "reconnecting";
  queueMode: boolean;
  quit(): void;
  openPicker(): Promise<void>;
  switchTo(id: string): void;
  runCommand(line: string): Promise<void>;
  fail(e: unknown): void;
}

export function useComposer(d: ComposerDeps) {
  const { api, store, sessionId, live, link, fail } = d;
  const [restore, setRestore] = useState<{ text: string; n: number }>({ text: "", n: 0 });
  const pendingPrompt = useRef(d.firstPrompt);
  /** Messages typed before the session's stream is live are sent once it is (nothing is lost at start-up). */
  const early = useRef<string[]>([]);

  /** Not sent: the message goes back into the input (it is in the history too), to send again. */
  const notSent = useCallback(
    (raw: string, why?: unknown) => {
      const down = why === undefined || why instanceof TypeError || /fetch failed|ECONNREFUSED/i.test(String(why));
      store.note(
        down
          ? "not sent: the daemon is unreachable. Your message is back in the input; press Enter once it reconnects."
          : `not sent: ${why instanceof Error ? why.message : String(why)} (your message is back in the input)`,
        "error",
      );
      setRestore((r) => ({ text: raw, n: r.n + 1 }));
    },
    [store],
  );
  const sendPrompt = useCallback(
    (text: string, raw = text) =>
      ok(
        api.POST("/api/v1/sessions/{id}/chat", {
          params: { path: { id: sessionId } },
          body: { text, clientMessageId: randomUUID() },
        }),
      ).catch((e: unknown) => notSent(raw, e)),
    [api, sessionId, notSent],
  );

  const { history, quit, openPicker, switchTo, runCommand, queueMode } = d;
  const onSubmit = useCallback(
    (text: string, raw: string) => {
      // Before the session's stream is open (or while its project awaits trust), a message waits to go out; not
      // when the daemon is known to be away: then it is not sent, and says so.
      if (!live && link === "reconnecting" && !store.trustRequired) return notSent(raw);
      if (!live || store.trustRequired) {
        early.current.push(text);
        return;
      }
      history.add(raw);
      const line = text.trim();
      const name = line.startsWith("/") ? (line.split(/\s+/)[0] ?? "") : "";
      if (name === "/exit" || name === "/quit") return quit();
      if (name === "/sessions") return void openPicker().catch(fail);
      if (name === "/new") {
        return void ok(api.POST("/api/v1/sessions", { body: { cwd: store.session?.cwd } }))
          .then((r) => switchTo(r.id))
          .catch(fail);
      }
      const preset = name === "/provider" ? parsePresetCommand(line) : undefined;
      if (preset && "list" in preset) return store.note(preset.list, "info");
      if (preset && "error" in preset) return store.note(preset.error, "error");
      if (preset) {
        // The daemon verifies the endpoint and key before it saves anything.
        store.note(`checking ${preset.body.baseURL}…`, "info");
        return void ok(api.PUT("/api/v1/settings/provider", { body: preset.body }))
          .then((r) => store.note(r.message, "info"))
          .catch(fail);
      }
      if (name) return void runCommand(line).catch(fail);
      if (store.running) {
        const params = { path: { id: sessionId } };
        if (queueMode) {
          store.note(`queued for after this turn: ${line}`, "info");
          return void ok(api.POST("/api/v1/sessions/{id}/followup", { params, body: { message: line } })).catch(fail);
        }
        store.note(`steering: ${line}`, "info");
        return void ok(api.POST("/api/v1/sessions/{id}/steer", { params, body: { message: line } })).catch(fail);
      }
      void sendPrompt(line, raw);
    },
    [
      history,
      quit,
      openPicker,
      fail,
      api,
      store,
      switchTo,
      runCommand,
      queueMode,
      sessionId,
      sendPrompt,
      live,
      link,
      notSent,
    ],
  );
  const onSubmitRef = useRef(onSubmit);
  onSubmitRef.current = onSubmit;

  // What waited goes out once the stream is live; the first prompt waits for the trust decision.
  useEffect(() => {
    if (d.ready && live && !store.trustRequired && early.current.length) {
      const lines = early.current;
      early.current = [];
      for (const line of lines) onSubmitRef.current(line, line);
    }
    if (d.ready && live && !store.trustRequired && pendingPrompt.current) {
      const p = pendingPrompt.current;
      pendingPrompt.current = undefined;
      void sendPrompt(p);
    }
  });

  const abort = useCallback(() => {
    if (!store.running) return;
    store.note("aborting the turn…", "warn");
    void ok(api.POST("/api/v1/sessions/{id}/abort", { params: { path: { id: sessionId } } })).catch(fail);
  }, [api, sessionId, store, fail]);

  return { onSubmit, sendPrompt, abort, restore };
}
