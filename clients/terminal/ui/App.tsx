/**
 * The interactive client: the session's transcript (printed once, to the scrollback), the live turn, pending
 * decisions, the composer and the status line. Everything goes through `/api/v1` and the session's event stream;
 * each job is a hook of its own (use*.ts next to this file).
 */
import { Box, Static, Text, useApp } from "ink";
import { useCallback, useEffect, useMemo, useRef, useSyncExternalStore } from "react";
import type { DaemonConnection } from "../../api/daemon.js";
import type { InputHistory } from "../history.js";
import { loadMarkdown } from "../markdown.js";
import { activeDecision } from "./ActiveDecision.js";
import { Composer } from "./Composer.js";
import type { KeyHandler } from "./keys.js";
import { SessionView } from "./store.js";
import { ItemView, LiveView, Rule, StatusLine, TodoList } from "./Transcript.js";
import { useCompletion } from "./useCompletion.js";
import { useComposer } from "./useComposer.js";
import { useDecisions } from "./useDecisions.js";
import { useKeybindings } from "./useKeybindings.js";
import { useScrollback } from "./useScrollback.js";
import { useSessionStream } from "./useSessionStream.js";
import { useSessionSwitch } from "./useSessionSwitch.js";
import { useSlashCommands } from "./useSlashCommands.js";

export interface AppProps {
  conn: DaemonConnection;
  sessionId: string;
  firstPrompt?: string;
  history: InputHistory;
  /** Reports the session shown, so the exit message can name it. */
  onSession(id: string): void;
}

/** The context window of each model the daemon knows (for the status line's gauge). */
function useContextWindows(api: DaemonConnection["api"], store: SessionView): Map<string, number> {
  const windows = useRef(new Map<string, number>());
  useEffect(() => {
    void loadMarkdown().then(
      () => store.changed(),
      () => {},
    );
    api.GET("/api/v1/models/cached").then(
      (r) => {
        for (const m of r.data ?? []) if (m.contextWindow) windows.current.set(m.id, m.contextWindow);
      },
      () => {},
    );
  }, [api, store]);
  return windows.current;
}

export function App(props: AppProps) {
  const { conn } = props;
  const api = conn.api;
  const store = useMemo(() => new SessionView(), []);
  useSyncExternalStore(store.subscribe, store.getVersion);
  const { exit } = useApp();
  const keys = useRef<KeyHandler | undefined>(undefined);
  const fail = useCallback((e: unknown) => store.note(e instanceof Error ? e.message : String(e), "error"), [store]);

  const { width, staticKey, items } = useScrollback(store);
  const contextWindows = useContextWindows(api, store);
  const { sessionId, switchTo, picker, openPicker, closePicker } = useSessionSwitch(props.sessionId, api, store);
  const stream = useSessionStream({ conn, sessionId, store, onSession: props.onSession, fail });
  const quit = useCallback(() => {
    stream.sub.current?.close();
    exit();
  }, [exit, stream.sub]);
  const { queueMode, quitArmed, clearToken, showThinking } = useKeybindings(store, keys, quit);
  const { runCommand, rewindChoices, closeRewind } = useSlashCommands(api, sessionId, store, switchTo);
  const composer = useComposer({
    api,
    store,
    sessionId,
    history: props.history,
    firstPrompt: props.firstPrompt,
    ready: stream.ready,
    live: stream.live,
    link: stream.link,
    queueMode,
    quit,
    openPicker,
    switchTo,
    runCommand,
    fail,
  });
  const complete = useCompletion(api, sessionId);
  const answers = useDecisions(api, sessionId, store, composer.sendPrompt, fail);

  const s = store.session;
  const decision = activeDecision({
    keys,
    api,
    sessionId,
    store,
    answers,
    rewindChoices,
    closeRewind,
    picker,
    closePicker,
    switchTo,
  });

  return (
    <>
      <Static key={staticKey} items={items}>
        {(item) => (
          // Bounded by the terminal's width, so Ink wraps between words (the terminal would cut them anywhere).
          <Box key={item.key} width={width}>
            <ItemView item={item} width={width} showThinking={showThinking} />
          </Box>
        )}
      </Static>
      <Box flexDirection="column" width={width}>
        <LiveView
          text={store.liveText}
          thinking={store.liveThinking}
          tools={[...store.tools.values()]}
          width={width}
          running={store.running}
        />
        {store.retrying ? (
          <Text color="yellow" wrap="truncate-end">
            ⚠ {store.retrying}
          </Text>
        ) : null}
        <TodoList todos={store.todos} />
        {decision}
        <Rule width={width} />
        <Composer
          active={decision === null}
          keys={keys}
          history={props.history.list}
          placeholder={
            store.running
              ? queueMode
                ? " queue a message for after this turn · Ctrl+T: steer instead · Esc aborts"
                : " steer the agent · Ctrl+T: queue instead · Esc aborts"
              : " ask anything; / for commands, @ for files"
          }
          onSubmit={composer.onSubmit}
          complete={complete}
          onEscape={composer.abort}
          clearToken={clearToken}
          restore={composer.restore}
        />
        <StatusLine
          persona={s?.persona ?? ""}
          mode={s?.mode ?? ""}
          model={s?.model ?? ""}
          branch={s?.branch}
          promptTokens={store.promptTokens}
          contextWindow={contextWindows.get(s?.model ?? "")}
          totalTokens={store.totalTokens}
          running={store.running}
          startedAt={store.startedAt}
          queueMode={queueMode}
          link={stream.link}
          hint={quitArmed ? "Ctrl-C again to quit" : undefined}
          width={width}
        />
      </Box>
    </>
  );
}
