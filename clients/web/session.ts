/**
 * One open session: its transcript and pending decisions as signals, fed by GET /sessions/{id} and its event stream.
 * Streaming tokens only touch the live block's signal, so the rest of the transcript never re-renders per token.
 */
import { batch, type Signal, signal } from "@preact/signals";
import { api, type DisplayMessage, ok, type Schemas } from "./api.js";
import { modelLabel, online, uid } from "./store.js";

/** A page of recent history, as GET /sessions/{id} and the rewind/redo events carry it. */
type HistoryView = { messages: DisplayMessage[]; oldestSeq: number | null; hasMoreHistory: boolean };

export interface ToolState {
  id: string;
  name: string;
  args: string;
  status: "pending" | "running" | "ok" | "error";
  result: string;
  output: string;
}

export interface Item {
  key: string;
  role: "user" | "assistant" | "system" | "warning" | "notice" | "error";
  content: string;
  thinking?: string;
  tools?: Signal<ToolState>[];
  images?: string[];
  footer?: string;
  seq?: number;
  /** When it happened (ISO), for errors read back from the session. */
  at?: string;
}

export interface Confirmation {
  id: string;
  tool: string;
  command: string;
  reason: string;
  /** "dangerous", "network", "not sandboxed", "rule". */
  reasons?: string[];
  /** The rule offered to remember the answer. */
  suggestedRule?: string;
  expiresAt?: number | string;
}

export interface QuestionSet {
  id?: string;
  questions: Array<{
    question: string;
    header?: string;
    multiSelect?: boolean;
    options: Array<{ label: string; value: string; description?: string }>;
  }>;
}

export interface Todo {
  content: string;
  status: string;
}

export interface TrustState {
  path: string;
  resources: Record<string, string[]>;
}

type Ev = Record<string, unknown> & { type: string };

let keyCounter = 0;
const nextKey = () => `k${++keyCounter}`;

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

  private readonly tools = new Map<string, Signal<ToolState>>();
  private readonly seenSeqs = new Set<number>();
  private es: EventSource | undefined;
  /** The model's time in the running turn (its calls' generation times), for the turn's footer. */
  private generationMs = 0;
  private closed = false;
  private oldestSeq: number | null = null;
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
      const failed = s.lastError;
      const streaming = (s.streaming ?? []) as Array<{ kind?: string; text?: string }>;
      batch(() => {
        this.info.value = s;
        this.redraw(s, s.status === "running");
        // Why the last turn failed, where it failed: after the last message (unless a later turn has begun).
        const lastSeq = this.items.value.reduce((n, i) => Math.max(n, i.seq ?? 0), 0);
        if (failed && failed.afterSeq >= lastSeq)
          this.push({ key: nextKey(), role: "error", content: failed.message, at: failed.at });
        this.status.value = s.status;
        this.mode.value = s.mode;
        this.liveText.value = streaming
          .filter((b) => b.kind === "content")
          .map((b) => b.text ?? "")
          .join("");
        this.liveThinking.value = streaming
          .filter((b) => b.kind === "thinking")
          .map((b) => b.text ?? "")
          .join("");
        this.applyPending(s as unknown as Ev);
        this.loadError.value = null;
      });
      this.setTrust(s.projectTrust);
    } catch (err) {
      this.loadError.value = err instanceof Error ? err.message : String(err);
    }
  }

  /** Shows a page of recent history in place of everything shown (a load, a rewind, a redo). */
  private redraw(view: HistoryView, running: boolean): void {
    this.tools.clear();
    this.seenSeqs.clear();
    const items = withTurnFooters(view.messages, (m) => this.fromDisplay(m), running);
    this.items.value = items;
    this.hasMoreHistory.value = view.hasMoreHistory;
    this.oldestSeq = view.oldestSeq;
  }

  /** Whether a page of older history is being read. */
  loadingEarlier(): boolean {
    return this.loadingHistory;
  }

  /** Pages older history in from the daemon (the transcript shows only what is near the viewport). */
  async showEarlier(): Promise<void> {
    const oldest = this.oldestSeq;
    // One page at a time: a second click while one is loading would fetch (and show) the same page twice.
    if (!this.hasMoreHistory.value || oldest === null || this.loadingHistory) return;
    this.loadingHistory = true;
    try {
      const page = await ok(
        api.GET("/api/v1/sessions/{id}/history", { params: { path: { id: this.id }, query: { before: oldest } } }),
      );
      const older = page.messages
        .filter((m) => m.seq === undefined || !this.seenSeqs.has(m.seq))
        .map((m) => this.fromDisplay(m));
      batch(() => {
        this.items.value = [...older, ...this.items.value];
        this.hasMoreHistory.value = page.hasMoreHistory;
      });
      this.oldestSeq = page.oldestSeq;
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

  private fromDisplay(m: DisplayMessage): Item {
    if (typeof m.seq === "number") this.seenSeqs.add(m.seq);
    const tools = (m.toolCalls ?? []).map((t) => {
      const s = signal<ToolState>({
        id: t.id,
        name: t.name,
        args: t.args,
        status: t.status,
        result: t.result,
        output: "",
      });
      this.tools.set(t.id, s);
      return s;
    });
    return {
      key: m.seq !== undefined ? `m${m.seq}` : nextKey(),
      role: m.role,
      content: m.content ?? "",
      thinking: m.thinking,
      tools: tools.length ? tools : undefined,
      images: m.images,
      seq: m.seq,
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

  private applyPending(e: Ev): void {
    this.confirmations.value = (e.pendingConfirmations as Confirmation[] | undefined) ?? [];
    this.question.value = (e.question as QuestionSet | undefined) ?? null;
    this.planTransition.value = (e.planTransition as Record<string, unknown> | undefined) ?? null;
    if (Array.isArray(e.todos)) this.todos.value = e.todos as Todo[];
  }

  /** The trust prompt rides on the session (GET, the first frame, session_update): present only while undecided. */
  private setTrust(pt: Schemas["ProjectTrustPrompt"] | undefined): void {
    this.trust.value = pt?.required
      ? { path: pt.path, resources: pt.resources as unknown as Record<string, string[]> }
      : null;
  }

  apply(e: Ev): void {
    switch (e.type) {
      case "status":
        batch(() => {
          this.status.value = (e.status as "idle" | "running") ?? this.status.value;
          if (e.mode === "build" || e.mode === "plan") this.mode.value = e.mode;
          // The first frame of every (re)connection carries the pending decisions.
          if ("lastSeq" in e) {
            this.applyPending(e);
            this.setTrust(e.projectTrust as Schemas["ProjectTrustPrompt"] | undefined);
          }
          if (e.status === "idle") {
            this.liveText.value = "";
            this.liveThinking.value = "";
            this.chips.value = [];
          }
        });
        return;
      case "resync":
        void this.reload();
        return;
      case "rewind":
      case "redo":
        // The event carries the history after it: redrawn in stream order, so what follows it is never lost.
        this.redraw(e as unknown as HistoryView, false);
        return;
      case "user_message": {
        const m = e.message as { content?: unknown; seq?: number };
        if (typeof m.seq === "number") {
          if (this.seenSeqs.has(m.seq)) return;
          this.seenSeqs.add(m.seq);
        }
        this.push({ key: nextKey(), role: "user", content: textOf(m.content), seq: m.seq });
        return;
      }
      case "token":
        this.liveText.value += String(e.text ?? "");
        return;
      case "thinking":
        this.liveThinking.value += String(e.text ?? "");
        return;
      case "retry":
        this.retryNote.value = `Provider call failed (${String(e.reason ?? "error")}); retry ${String(e.attempt)} in ${Math.round(Number(e.delayMs ?? 0) / 1000)} s`;
        return;
      case "usage":
        this.retryNote.value = null;
        return;
      case "assistant_message": {
        this.generationMs += Number(e.generationMs ?? 0);
        const calls = (e.toolCalls as Array<{ id: string; name: string; arguments?: string }> | undefined) ?? [];
        const tools = calls.map((c) => {
          const s = signal<ToolState>({
            id: c.id,
            name: c.name,
            args: c.arguments ?? "{}",
            status: "pending",
            result: "",
            output: "",
          });
          this.tools.set(c.id, s);
          return s;
        });
        batch(() => {
          this.push({
            key: nextKey(),
            role: "assistant",
            content: String(e.content ?? ""),
            thinking: e.thinking ? String(e.thinking) : undefined,
            tools: tools.length ? tools : undefined,
          });
          this.liveText.value = "";
          this.liveThinking.value = "";
        });
        return;
      }
      case "tool_start":
      case "tool_end": {
        const id = String(e.id);
        let s = this.tools.get(id);
        if (!s) {
          s = signal<ToolState>({
            id,
            name: String(e.name),
            args: String(e.args ?? "{}"),
            status: "running",
            result: "",
            output: "",
          });
          this.tools.set(id, s);
          this.push({ key: nextKey(), role: "assistant", content: "", tools: [s] });
        }
        if (e.type === "tool_start") s.value = { ...s.value, status: "running" };
        else {
          const r = e.result as { content?: unknown } | undefined;
          s.value = { ...s.value, status: e.status === "error" ? "error" : "ok", result: textOf(r?.content) };
        }
        return;
      }
      case "tool_output": {
        const s = this.tools.get(String(e.toolCallId));
        if (s) s.value = { ...s.value, output: s.value.output + String(e.text ?? "") };
        return;
      }
      case "bash_confirm":
        this.confirmations.value = [
          ...this.confirmations.value.filter((c) => c.id !== e.id),
          e as unknown as Confirmation,
        ];
        this.onTurnEnd?.("decision");
        return;
      case "bash_confirm_resolved":
        this.confirmations.value = this.confirmations.value.filter((c) => c.id !== e.id);
        return;
      case "decision_state":
        this.question.value = (e.question as QuestionSet | undefined) ?? null;
        this.planTransition.value = (e.planTransition as Record<string, unknown> | undefined) ?? null;
        if (e.question || e.planTransition) this.onTurnEnd?.("decision");
        return;
      case "todos_updated":
        this.todos.value = (e.todos as Todo[]) ?? [];
        return;
      case "steering_injected":
      case "followup_injected":
        this.chips.value = this.chips.value.slice(((e.messages as unknown[]) ?? []).length);
        // A queued follow-up that becomes a new turn is announced here and again by its user_message: same seq.
        for (const m of (e.messages as Array<{ content?: unknown; seq?: number }>) ?? []) {
          if (typeof m.seq === "number") {
            if (this.seenSeqs.has(m.seq)) continue;
            this.seenSeqs.add(m.seq);
          }
          this.push({ key: nextKey(), role: "user", content: textOf(m.content ?? m), seq: m.seq });
        }
        return;
      case "turn_meta":
        this.push({
          key: nextKey(),
          role: "notice",
          content: "",
          footer: footerText(String(e.model ?? ""), this.generationMs),
        });
        this.generationMs = 0;
        return;
      case "end":
        if (e.reason === "aborted") this.push({ key: nextKey(), role: "notice", content: "Stopped." });
        if (e.reason === "disconnected")
          this.push({ key: nextKey(), role: "warning", content: "The provider stream ended early." });
        this.retryNote.value = null;
        this.onTurnEnd?.("done");
        return;
      case "error":
        this.push({
          key: nextKey(),
          role: "error",
          content: String(e.message ?? "Error"),
          at: new Date().toISOString(),
        });
        return;
      case "notice":
        this.push({ key: nextKey(), role: "notice", content: String(e.message ?? "") });
        return;
      case "session_update": {
        const summary = e.session as Schemas["SessionSummary"] | undefined;
        // A summary without a worktree means the session has none (any more: discarded, maybe by another client).
        if (this.info.value && summary)
          this.info.value = { ...this.info.value, ...summary, worktree: summary.worktree };
        if (summary) this.setTrust(summary.projectTrust);
        return;
      }
      case "compaction":
        this.push({ key: nextKey(), role: "notice", content: `Compacted ${String(e.messagesCompacted)} messages.` });
        return;
      default:
        return;
    }
  }
}

function textOf(c: unknown): string {
  if (typeof c === "string") return c;
  if (Array.isArray(c))
    return c
      .map((p) => (typeof p === "string" ? p : ((p as { text?: string }).text ?? "")))
      .filter(Boolean)
      .join("\n");
  if (c && typeof c === "object" && "text" in c) return String((c as { text: unknown }).text);
  return c === undefined || c === null ? "" : JSON.stringify(c);
}

/** A turn's footer, the same live and read back: the model and the time it spent generating. */
function footerText(model: string, ms: number): string {
  return [modelLabel(model), ms ? `${(ms / 1000).toFixed(1)} s` : ""].filter(Boolean).join(" · ");
}

/**
 * Read back, a turn ends where the next user message starts: its footer (as the live `turn_meta` makes it) follows
 * its last assistant message, with the generation times of all its model calls.
 */
function withTurnFooters(messages: DisplayMessage[], toItem: (m: DisplayMessage) => Item, running: boolean): Item[] {
  const out: Item[] = [];
  let model = "";
  let ms = 0;
  const close = () => {
    if (model) out.push({ key: nextKey(), role: "notice", content: "", footer: footerText(model, ms) });
    model = "";
    ms = 0;
  };
  for (const m of messages) {
    if (m.role === "user") close();
    out.push(toItem(m));
    const meta = m.turnMeta as { model?: string; generationMs?: number } | undefined;
    if (m.role === "assistant" && meta?.model) {
      model = meta.model;
      ms += meta.generationMs ?? 0;
    }
  }
  // A running turn gets its footer live, when it ends.
  if (!running) close();
  return out;
}
