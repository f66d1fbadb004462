/**
 * One open session: its transcript and pending decisions as signals, fed by GET /sessions/{id} and its event stream.
 * Streaming tokens only touch the live block's signal, so the rest of the transcript never re-renders per token.
 */
import { batch, type Signal, signal } from "@preact/signals";
import * as fold from "../api/session-state.js";
import { api, ok, type Schemas } from "./api.js";
import { entryItem, type Item, nextKey, storedItem, type ToolState, withTurnFooters } from "./items.js";
import { online, uid } from "./store.js";

export type { Item, ToolState };
export type Confirmation = fold.Confirmation;
export type QuestionSet = fold.QuestionSet;
export type Todo = fold.Todo;
export type TrustState = fold.TrustPrompt;

type Ev = Record<string, unknown> & { type: string };

export class SessionState {
  readonly info = signal<Schemas["Session"] | null>(null);
  readonly items = signal<Item[]>([]);
  /** How many of the oldest loaded items are not rendered yet (first paint shows the latest ones). */
  readonly hasMoreHistory = signal(false);
  readonly liveText = signal("");
  readonly liveThinking = signal("");
  readonly status = signal<"idle" | "running" | "error">("idle");
  readonly mode = signal<"build" | "plan">("build");
  readonly confirmations = signal<Confirmation[]>([]);
  readonly question = signal<QuestionSet | null>(null);
  readonly planTransition = signal<Record<string, unknown> | null>(null);
  readonly todos = signal<Todo[]>([]);
  readonly chips = signal<Array<{ id: string; kind: "steer" | "queued"; text: string }>>([]);
  readonly trust = signal<TrustState | null>(null);
  readonly connected = signal(false);
  readonly loadError = signal<string | null>(null);
  readonly retryNote = signal<string | null>(null);
  /** Text for the composer to take (Edit and resend); it clears it once taken. */
  readonly draftRequest = signal<string | null>(null);

  /** The session folded from its reads and events; the signals above show it. */
  private state = fold.initialState();
  private readonly tools = new Map<string, Signal<ToolState>>();
  private es: EventSource | undefined;
  private closed = false;
  private loadingHistory = false;
  onTurnEnd?: (why: "done" | "decision") => void;

  constructor(readonly id: string) {}

  async open(): Promise<void> {
    await this.reload();
    this.connect();
  }

  close(): void {
    this.closed = true;
    this.es?.close();
  }

  /** Re-reads the whole session (first open, and after a `resync`). */
  async reload(): Promise<void> {
    try {
      const s = await ok(api.GET("/api/v1/sessions/{id}", { params: { path: { id: this.id } } }));
      batch(() => {
        this.info.value = s;
        this.show(fold.loaded(this.state, s), { running: s.status === "running", all: true });
        this.loadError.value = null;
      });
    } catch (err) {
      this.loadError.value = err instanceof Error ? err.message : String(err);
    }
  }

  /**
   * Shows a new state: a replaced transcript is drawn anew (a load, a rewind, a redo), new entries are appended,
   * changed tool calls update their own signal, and every other signal follows the state where it changed (or
   * wholly, after a read: `all`). `running`: a running turn's footer is not drawn yet.
   */
  private show(next: fold.SessionState, opts: { running?: boolean; all?: boolean } = {}): void {
    const running = opts.running ?? false;
    const was = this.state;
    this.state = next;
    const changed = (k: keyof fold.SessionState) => opts.all || next[k] !== was[k];
    if (next.tools !== was.tools) {
      for (const [id, t] of Object.entries(next.tools)) {
        const s = this.tools.get(id);
        if (!s) this.tools.set(id, signal(t));
        else if (s.peek() !== t) s.value = t;
      }
    }
    const tool = (id: string) => this.toolSignal(id);
    if (next.epoch !== was.epoch) {
      const stored = next.transcript.filter((e) => e.kind === "stored").map((e) => e.message);
      const rest = next.transcript.filter((e) => e.kind !== "stored");
      const items = withTurnFooters(stored, (m) => storedItem(m, tool), running);
      for (const e of rest) {
        const item = entryItem(e, tool);
        if (item) items.push(item);
      }
      this.items.value = items;
      this.hasMoreHistory.value = next.hasMoreHistory;
    } else if (next.transcript !== was.transcript) {
      const added = next.transcript.slice(was.transcript.length).flatMap((e) => entryItem(e, tool) ?? []);
      if (added.length) this.items.value = [...this.items.value, ...added];
    }
    if (changed("status")) this.status.value = next.status;
    if (changed("mode")) this.mode.value = next.mode;
    this.liveText.value = next.liveText;
    this.liveThinking.value = next.liveThinking;
    if (changed("confirmations")) this.confirmations.value = [...next.confirmations];
    if (changed("question")) this.question.value = next.question ?? null;
    if (changed("planTransition")) this.planTransition.value = next.planTransition ?? null;
    if (changed("todos")) this.todos.value = [...next.todos];
    if (changed("trust")) this.trust.value = next.trust ?? null;
    if (changed("retry")) {
      const r = next.retry;
      this.retryNote.value = r
        ? `Provider call failed (${r.reason}); retry ${String(r.attempt)} in ${Math.round(r.delayMs / 1000)} s`
        : null;
    }
  }

  private toolSignal(id: string): Signal<ToolState> {
    let s = this.tools.get(id);
    if (!s) {
      s = signal(this.state.tools[id] ?? { id, name: "", args: "{}", status: "running", result: "", output: "" });
      this.tools.set(id, s);
    }
    return s;
  }

  /** Whether a page of older history is being read. */
  loadingEarlier(): boolean {
    return this.loadingHistory;
  }

  /** Pages older history in from the daemon (the transcript shows only what is near the viewport). */
  async showEarlier(): Promise<void> {
    const oldest = this.state.oldestSeq;
    // One page at a time: a second click while one is loading would fetch (and show) the same page twice.
    if (!this.hasMoreHistory.value || oldest === null || this.loadingHistory) return;
    this.loadingHistory = true;
    try {
      const page = await ok(
        api.GET("/api/v1/sessions/{id}/history", { params: { path: { id: this.id }, query: { before: oldest } } }),
      );
      const { state, added } = fold.prepended(this.state, page);
      this.state = state;
      for (const [id, t] of Object.entries(state.tools)) if (!this.tools.has(id)) this.tools.set(id, signal(t));
      const older = added.map((m) => storedItem(m, (id) => this.toolSignal(id)));
      batch(() => {
        this.items.value = [...older, ...this.items.value];
        this.hasMoreHistory.value = page.hasMoreHistory;
      });
    } catch (err) {
      this.loadError.value = err instanceof Error ? err.message : String(err);
    } finally {
      this.loadingHistory = false;
    }
  }

  private connect(): void {
    if (this.closed) return;
    // The browser's EventSource sends the cookie and resumes with Last-Event-ID on its own; the first connection
    // starts where the session was read (its lastSeq), so nothing between the read and the stream is missed.
    const from = this.info.value?.lastSeq;
    const query = from === undefined ? "" : `?lastEventId=${from}`;
    const es = new EventSource(`/api/v1/sessions/${encodeURIComponent(this.id)}/events${query}`);
    this.es = es;
    es.onopen = () => {
      this.connected.value = true;
      online.value = true;
    };
    es.onerror = () => {
      this.connected.value = false;
      if (es.readyState === EventSource.CLOSED) {
        // A refused reconnect (e.g. the daemon restarted and answered 401/404 once): retry ourselves.
        setTimeout(() => this.connect(), 1500);
      }
    };
    es.onmessage = (m) => {
      try {
        this.apply(JSON.parse(m.data as string) as Ev);
      } catch {
        // a malformed frame is skipped
      }
    };
  }

  /**
   * Retry: the last user message and its answer are replaced, not followed. The conversation is rewound to before
   * the message (files stay as they are; "Rewind to here" restores those), then the message is sent again.
   */
  async retry(seq: number | undefined, text: string): Promise<void> {
    try {
      if (seq !== undefined) {
        await ok(
          api.POST("/api/v1/sessions/{id}/rewind", {
            params: { path: { id: this.id } },
            body: { messageSeq: seq, restore: "conversation" },
          }),
        );
      }
    } catch (err) {
      this.push({ key: nextKey(), role: "error", content: err instanceof Error ? err.message : String(err) });
      return;
    }
    await this.send(text);
  }

  /** Sends a message as a new turn; a failure is shown like any other. */
  async send(text: string): Promise<void> {
    try {
      await ok(
        api.POST("/api/v1/sessions/{id}/chat", {
          params: { path: { id: this.id } },
          body: { text, clientMessageId: uid() },
        }),
      );
    } catch (err) {
      this.push({ key: nextKey(), role: "error", content: err instanceof Error ? err.message : String(err) });
    }
  }

  push(item: Item): void {
    this.items.value = [...this.items.value, item];
  }

  apply(e: Ev): void {
    batch(() => {
      this.show(fold.reduce(this.state, e));
      this.presentationOf(e);
    });
  }

  /** What an event means to this page beyond the session's state: chips, the session's header, notifications. */
  private presentationOf(e: Ev): void {
    switch (e.type) {
      case "status":
        if (e.status === "idle") this.chips.value = [];
        return;
      case "resync":
        void this.reload();
        return;
      case "steering_injected":
      case "followup_injected":
        this.chips.value = this.chips.value.slice(((e.messages as unknown[]) ?? []).length);
        return;
      case "bash_confirm":
        this.onTurnEnd?.("decision");
        return;
      case "decision_state":
        if (e.question || e.planTransition) this.onTurnEnd?.("decision");
        return;
      case "end":
        this.onTurnEnd?.("done");
        return;
      case "session_update": {
        const summary = e.session as Schemas["SessionSummary"] | undefined;
        // A summary without a worktree means the session has none (any more: discarded, maybe by another client).
        if (this.info.value && summary)
          this.info.value = { ...this.info.value, ...summary, worktree: summary.worktree };
        return;
      }
      default:
        return;
    }
  }
}
