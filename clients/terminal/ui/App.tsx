/**
 * The interactive client: the session's transcript (printed once, to the scrollback), the live turn, pending
 * decisions, the composer and the status line. Everything goes through `/api/v1` and the session's event stream.
 */
import { randomUUID } from "node:crypto";
import { Box, Static, Text, useApp, useInput, useStdout } from "ink";
import { type ReactElement, useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from "react";
import { ok, type Schemas } from "../../api/client.js";
import type { DaemonConnection } from "../../api/daemon.js";
import { type StreamEvent, type Subscription, subscribe } from "../../api/events.js";
import { ago, waitingMark } from "../format.js";
import type { InputHistory } from "../history.js";
import { loadMarkdown } from "../markdown.js";
import { parsePresetCommand } from "../provider-preset.js";
import { refusal, worktreeReply } from "../worktree.js";
import { Composer, type Suggestion } from "./Composer.js";
import { type ConfirmAnswer, ConfirmPrompt, PlanPrompt, QuestionPrompt, TrustPrompt } from "./Decisions.js";
import * as ed from "./editor.js";
import type { KeyHandler } from "./keys.js";
import { Picker } from "./Picker.js";
import { type RewindChoice, RewindPicker } from "./RewindPicker.js";
import { describeResources, SessionView } from "./store.js";
import { ItemView, LiveView, Rule, StatusLine, TodoList } from "./Transcript.js";

export interface AppProps {
  conn: DaemonConnection;
  sessionId: string;
  firstPrompt?: string;
  history: InputHistory;
  /** Reports the session shown, so the exit message can name it. */
  onSession(id: string): void;
}

const LOCAL_COMMANDS: Suggestion[] = [
  {
    label: "/exit",
    hint: "quit the client (the session stays in the daemon)",
    apply: () => ({ text: "/exit", cursor: 5 }),
  },
  { label: "/sessions", hint: "switch to another session", apply: () => ({ text: "/sessions", cursor: 9 }) },
  { label: "/new", hint: "start a new session in this directory", apply: () => ({ text: "/new", cursor: 4 }) },
];

const REPRINT = 300;
const LOCAL_HELP =
  "This client also has: /sessions (switch session), /new (new session here), /provider presets (and /provider " +
  "preset <id> [part…] [key=K] [model=M]: set the endpoint, verified first), /exit. Keys: Enter sends (steers while " +
  "a turn runs; Ctrl+T queues instead), Alt+Enter or Ctrl+J new line, Tab completes, Esc aborts, Ctrl+O thinking, " +
  "Ctrl-C twice quits.";
/** Events are applied in batches: one render per batch (Ink draws at most 30 frames a second anyway). */
const FLUSH_MS = 50;

type SessionDetail = Schemas["Session"];

/** The terminal width; a resize reprints the transcript (see start.tsx), re-wrapped to the new width. */
function useWidth(onResize: () => void): number {
  const { stdout } = useStdout();
  const [width, setWidth] = useState(stdout.columns || 80);
  const cb = useRef(onResize);
  cb.current = onResize;
  useEffect(() => {
    const onResize = () => {
      setWidth(stdout.columns || 80);
      cb.current();
    };
    stdout.on("resize", onResize);
    return () => {
      stdout.off("resize", onResize);
    };
  }, [stdout]);
  return width;
}

/** Says once, at the top of a session, when the agent's commands are not confined. */
async function warnUnconfined(
  client: DaemonConnection["api"],
  store: { note(text: string, tone: "warn"): void; changed(): void },
) {
  const status = await ok(client.GET("/api/v1/server/status")).catch(() => undefined);
  const sandbox = status?.sandbox;
  if (!sandbox || sandbox.enabled) return;
  store.note(
    sandbox.kind === "off"
      ? 'sandbox off (config sandbox: "off"): commands run with all of your power'
      : `commands are NOT sandboxed (${sandbox.reason ?? "unavailable"}): each one is asked about`,
    "warn",
  );
  store.changed();
}

export function App(props: AppProps) {
  const { conn } = props;
  const api = conn.api;
  const store = useMemo(() => new SessionView(), []);
  useSyncExternalStore(store.subscribe, store.getVersion);
  const { exit } = useApp();
  // <Static> prints each item once; after a resize it is remounted to print the transcript again (the last
  // REPRINT items) at the new width.
  const [staticKey, setStaticKey] = useState(0);
  const staticFrom = useRef(0);
  const width = useWidth(() => {
    staticFrom.current = Math.max(0, store.items.length - REPRINT);
    setStaticKey((k) => k + 1);
  });
  // A rewind drew the transcript anew (store.redraws): clear the screen and print it again.
  const { stdout } = useStdout();
  useEffect(() => {
    if (!store.redraws) return;
    stdout.write("\x1b[2J\x1b[3J\x1b[H");
    staticFrom.current = Math.max(0, store.items.length - REPRINT);
    setStaticKey((k) => k + 1);
  }, [store.redraws, store, stdout]);
  const [sessionId, setSessionId] = useState(props.sessionId);
  const [picker, setPicker] = useState<Schemas["SessionSummary"][] | undefined>();
  const [rewindChoices, setRewindChoices] = useState<RewindChoice[] | undefined>();
  const [queueMode, setQueueMode] = useState(false);
  const [link, setLink] = useState<"open" | "reconnecting">("open");
  const [quitArmed, setQuitArmed] = useState(false);
  const quitArmedRef = useRef(false);
  const [clearToken, setClearToken] = useState(0);
  const [showThinking, setShowThinking] = useState(false);
  const [ready, setReady] = useState(false);
  const commands = useRef<Schemas["SlashCommand"][]>([]);
  const pendingPrompt = useRef(props.firstPrompt);
  const sub = useRef<Subscription | undefined>(undefined);
  const keys = useRef<KeyHandler | undefined>(undefined);
  const contextWindows = useRef(new Map<string, number>());
  /** Messages typed before the session's stream is live are sent once it is (nothing is lost at start-up). */
  const early = useRef<string[]>([]);
  const [live, setLive] = useState(false);

  const fail = useCallback((e: unknown) => store.note(e instanceof Error ? e.message : String(e), "error"), [store]);

  useEffect(() => {
    void loadMarkdown().then(
      () => store.changed(),
      () => {},
    );
    api.GET("/api/v1/models/cached").then(
      (r) => {
        for (const m of r.data ?? []) if (m.contextWindow) contextWindows.current.set(m.id, m.contextWindow);
      },
      () => {},
    );
    api.GET("/api/v1/commands").then(
      (r) => {
        if (r.data) commands.current = r.data;
      },
      () => {},
    );
  }, [api, store]);

  const [restore, setRestore] = useState<{ text: string; n: number }>({ text: "", n: 0 });
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

  // Open the session: history, trust, then its live stream (the first frame carries pending decisions).
  useEffect(() => {
    let closed = false;
    let queue: StreamEvent[] = [];
    let timer: NodeJS.Timeout | undefined;
    let wasDown = false;
    const flush = () => {
      timer = undefined;
      const batch = queue;
      queue = [];
      for (const ev of batch) {
        if (ev.type === "resync") void refresh();
        store.apply(ev);
      }
      store.changed();
    };
    const refresh = async () => {
      const s = (await ok(
        api.GET("/api/v1/sessions/{id}", { params: { path: { id: sessionId }, query: { turns: 1 } } }),
      )) as SessionDetail;
      store.running = s.status === "running";
      store.question = s.question as never;
      store.plan = s.planTransition as never;
      store.confirmations = Array.isArray(s.pendingConfirmations) ? (s.pendingConfirmations as never) : [];
      store.note("caught up with the session after a gap in the stream", "dim");
    };
    (async () => {
      setReady(false);
      setLive(false);
      props.onSession(sessionId);
      const s = (await ok(
        api.GET("/api/v1/sessions/{id}", { params: { path: { id: sessionId }, query: { turns: 6 } } }),
      )) as SessionDetail;
      // History is printed once: with Markdown, so wait for the renderer when there is history to print.
      if (s.messages.length > 0) await loadMarkdown().catch(() => {});
      if (closed) return;
      store.load(s as never);
      void warnUnconfined(api, store);
      // The daemon says when the project awaits a trust decision (the first frame says it again).
      store.trustRequired = s.projectTrust
        ? { path: s.projectTrust.path, resources: s.projectTrust.resources as unknown as Record<string, string[]> }
        : undefined;
      store.changed();
      sub.current = subscribe(
        conn,
        sessionId,
        (ev) => {
          if (queue.length === 0 && !timer && ev.lastSeq !== undefined && ev.type === "status") {
            // The first frame (present state): apply at once, then let what was typed early go out.
            store.apply(ev);
            store.changed();
            setLive(true);
            return;
          }
          queue.push(ev);
          timer ??= setTimeout(flush, FLUSH_MS);
        },
        {
          // From where the session was read: what another client did in between is not missed.
          lastEventId: s.lastSeq === undefined ? undefined : String(s.lastSeq),
          onState: (state) => {
            if (state === "reconnecting" && !wasDown) {
              wasDown = true;
              setLink("reconnecting");
              store.note("connection to the daemon lost; reconnecting…", "warn");
            } else if (state === "open" && wasDown) {
              wasDown = false;
              setLink("open");
              store.note("reconnected", "ok");
            }
          },
        },
      );
      setReady(true);
    })().catch(fail);
    return () => {
      closed = true;
      if (timer) clearTimeout(timer);
      sub.current?.close();
      sub.current = undefined;
    };
  }, [sessionId, api, conn, store, fail, props.onSession]);

  // The first prompt waits for the trust decision.
  useEffect(() => {
    if (ready && live && !store.trustRequired && early.current.length) {
      const lines = early.current;
      early.current = [];
      for (const line of lines) onSubmitRef.current(line, line);
    }
    if (ready && live && !store.trustRequired && pendingPrompt.current) {
      const p = pendingPrompt.current;
      pendingPrompt.current = undefined;
      void sendPrompt(p);
    }
  });

  const quit = useCallback(() => {
    sub.current?.close();
    exit();
  }, [exit]);

  const switchTo = useCallback(
    (id: string) => {
      if (id === sessionId) return;
      store.note(`switching to session ${id}`, "info");
      setSessionId(id);
    },
    [sessionId, store],
  );

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

  const openPicker = useCallback(async () => {
    const page = (await ok(
      api.GET("/api/v1/sessions", { params: { query: { limit: 30 } } }),
    )) as Schemas["SessionPage"];
    setPicker(page.sessions);
  }, [api]);

  const onSubmit = useCallback(
    (text: string, raw: string) => {
      // Before the session's stream is open (or while its project awaits trust), a message waits to go out; not
      // when the daemon is known to be away: then it is not sent, and says so.
      if (!live && link === "reconnecting" && !store.trustRequired) return notSent(raw);
      if (!live || store.trustRequired) {
        early.current.push(text);
        return;
      }
      props.history.add(raw);
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
        if (queueMode) {
          store.note(`queued for after this turn: ${line}`, "info");
          return void ok(
            api.POST("/api/v1/sessions/{id}/followup", {
              params: { path: { id: sessionId } },
              body: { message: line },
            }),
          ).catch(fail);
        }
        store.note(`steering: ${line}`, "info");
        return void ok(
          api.POST("/api/v1/sessions/{id}/steer", { params: { path: { id: sessionId } }, body: { message: line } }),
        ).catch(fail);
      }
      void sendPrompt(line, raw);
    },
    [
      props.history,
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

  const complete = useCallback(
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

  const abort = useCallback(() => {
    if (!store.running) return;
    store.note("aborting the turn…", "warn");
    void ok(api.POST("/api/v1/sessions/{id}/abort", { params: { path: { id: sessionId } } })).catch(fail);
  }, [api, sessionId, store, fail]);

  useInput((input, key) => {
    // Ctrl-C pressed twice quickly can arrive as one chunk.
    if (input.length > 1 && [...input].every((c) => c === "\u0003")) return quit();
    if (key.ctrl && input === "c") {
      if (quitArmedRef.current) return quit();
      quitArmedRef.current = true;
      setQuitArmed(true);
      setClearToken((n) => n + 1);
      setTimeout(() => {
        quitArmedRef.current = false;
        setQuitArmed(false);
      }, 2000);
      return;
    }
    if (key.ctrl && input === "t") return setQueueMode((q) => !q);
    if (key.ctrl && input === "o") {
      setShowThinking((v) => !v);
      const last = [...store.items].reverse().find((i) => i.kind === "thinking");
      if (!showThinking && last && last.kind === "thinking") {
        store.add({ kind: "thinking", text: last.text });
        store.changed();
      }
      return;
    }
    // "text\r" is keys typed before they were read, then Enter: deliver them as such.
    if (input.length > 1 && /^[^\r\n]+\r$/.test(input)) {
      keys.current?.(input.slice(0, -1), key);
      keys.current?.("", { ...key, return: true });
      return;
    }
    keys.current?.(input, key);
  });

  const answerConfirmation = (id: string, answer: ConfirmAnswer) => {
    store.confirmations = store.confirmations.filter((c) => c.id !== id);
    if (answer.remember) {
      const where = { session: "for this session", project: "in this project", global: "everywhere" }[
        answer.remember.scope
      ];
      store.add({
        kind: "note",
        text: `remembered: allow ${answer.remember.pattern ?? "the suggested rule"} ${where}`,
        tone: "info",
      });
    }
    store.changed();
    void ok(
      api.POST("/api/v1/sessions/{id}/bash-confirm", {
        params: { path: { id: sessionId } },
        body: { id, allow: answer.allow, ...(answer.remember ? { remember: answer.remember } : {}) },
      }),
    ).catch(fail);
  };
  const answerQuestion = (values: Array<string | string[]>) => {
    store.question = undefined;
    store.add({
      kind: "note",
      text: `answered: ${values.map((v) => (Array.isArray(v) ? v.join(", ") : v)).join("; ")}`,
      tone: "info",
    });
    store.changed();
    void ok(
      api.POST("/api/v1/sessions/{id}/question", { params: { path: { id: sessionId } }, body: { values } }),
    ).catch(fail);
  };
  const choosePlan = (approve: boolean) => {
    store.plan = undefined;
    store.changed();
    if (!approve) {
      store.note("the plan stays open; keep refining it", "dim");
      void ok(
        api.POST("/api/v1/sessions/{id}/plan-transition", {
          params: { path: { id: sessionId } },
          body: { kind: "continue" },
        }),
      ).catch(fail);
      return;
    }
    void (async () => {
      await ok(
        api.POST("/api/v1/sessions/{id}/plan-transition", {
          params: { path: { id: sessionId } },
          body: { kind: "done" },
        }),
      );
      await ok(
        api.POST("/api/v1/sessions/{id}/mode", { params: { path: { id: sessionId } }, body: { mode: "build" } }),
      );
      await sendPrompt("The plan is approved. Implement it now.");
    })().catch(fail);
  };
  const chooseTrust = (trusted: boolean) => {
    const t = store.trustRequired;
    store.trustRequired = undefined;
    store.changed();
    if (!t) return;
    void ok(api.POST("/api/v1/projects/trust", { body: { cwd: t.path, trusted } }))
      .then(() =>
        store.note(
          trusted
            ? `trusted ${t.path}: its local resources load`
            : `not trusted: ${t.path} works with global resources only`,
          trusted ? "ok" : "dim",
        ),
      )
      .catch(fail);
  };

  const s = store.session;
  const confirmation = store.confirmations[0];
  let decision: ReactElement | null = null;
  if (rewindChoices) {
    decision = (
      <RewindPicker
        keys={keys}
        api={api}
        sessionId={sessionId}
        choices={rewindChoices}
        onDone={(error) => {
          setRewindChoices(undefined);
          if (error) store.note(error, "error");
        }}
      />
    );
  } else if (picker) {
    decision = (
      <Picker
        keys={keys}
        title="Switch to a session"
        items={picker.map((x) => ({
          label: `${x.title ?? "(untitled)"}`,
          value: x.id,
          badge: waitingMark(x.waiting) || undefined,
          hint: `${x.id === sessionId ? "(current) " : ""}${x.status === "running" ? "running · " : ""}${ago(x.updatedAt)} · ${x.cwd}`,
        }))}
        onSubmit={([id]) => {
          setPicker(undefined);
          if (id) switchTo(id);
        }}
        onCancel={() => setPicker(undefined)}
      />
    );
  } else if (store.trustRequired) {
    decision = (
      <TrustPrompt
        keys={keys}
        path={store.trustRequired.path}
        resources={describeResources(store.trustRequired.resources)}
        onChoice={chooseTrust}
      />
    );
  } else if (confirmation) {
    decision = (
      <ConfirmPrompt
        keys={keys}
        key={confirmation.id}
        confirmation={confirmation}
        onAnswer={(answer) => answerConfirmation(confirmation.id, answer)}
      />
    );
  } else if (store.question) {
    decision = (
      <QuestionPrompt
        keys={keys}
        key={store.question.id}
        questions={store.question.questions}
        onAnswer={answerQuestion}
      />
    );
  } else if (store.plan) {
    decision = <PlanPrompt keys={keys} plan={store.plan} onChoice={choosePlan} />;
  }

  return (
    <>
      <Static key={staticKey} items={staticFrom.current ? store.items.slice(staticFrom.current) : store.items}>
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
          onSubmit={onSubmit}
          complete={complete}
          onEscape={abort}
          clearToken={clearToken}
          restore={restore}
        />
        <StatusLine
          persona={s?.persona ?? ""}
          mode={s?.mode ?? ""}
          model={s?.model ?? ""}
          branch={s?.branch}
          promptTokens={store.promptTokens}
          contextWindow={contextWindows.current.get(s?.model ?? "")}
          totalTokens={store.totalTokens}
          running={store.running}
          startedAt={store.startedAt}
          queueMode={queueMode}
          link={link}
          hint={quitArmed ? "Ctrl-C again to quit" : undefined}
          width={width}
        />
      </Box>
    </>
  );
}
