/**
 * The view of a session, fed by its event stream: printed items (append-only, they go to the scrollback once),
 * the live part of the running turn (text and thinking being streamed, running tools with their output tail),
 * pending decisions and the status line's figures. Framework-free, so it is unit-tested without a terminal.
 */
import type { StreamEvent } from "../../api/events.js";
import * as fold from "../../api/session-state.js";
import { parseArgs, type QuestionSpec, type ToolResultLike, toolError, toolLine } from "../format.js";
import { splitFinished } from "../markdown.js";
import { describeRewind } from "../rewind.js";
import { messageItems, type ShownMessage } from "./history-items.js";

export { describeResources } from "../format.js";

/** Characters of a streaming block kept live before its finished lines are printed. */
const LIVE_MAX = 3000;

export type Tone = "dim" | "info" | "warn" | "error" | "ok";

export type Item =
  | { key: number; kind: "user"; text: string }
  | { key: number; kind: "assistant"; text: string }
  | { key: number; kind: "thinking"; text: string }
  | { key: number; kind: "tool"; line: string; status: "ok" | "error"; detail?: string }
  | { key: number; kind: "note"; text: string; tone: Tone };

export type { ShownMessage };

export type NewItem = Item extends infer I ? (I extends Item ? Omit<I, "key"> : never) : never;

export interface RunningTool {
  id: string;
  name: string;
  line: string;
  output: string;
  /** The command it runs (bash), to find the call a confirmation belongs to. */
  command?: string;
  /** Set when the user's confirmation denied it: its failure line says so instead of the model-facing error. */
  denied?: string;
}

export type Confirmation = fold.Confirmation;

export interface PendingQuestion {
  id: string;
  questions: QuestionSpec[];
}

export type PlanTransition = fold.PlanTransition;
export type Todo = fold.Todo;

export interface SessionInfo {
  id: string;
  title?: string;
  cwd: string;
  persona: string;
  model: string;
  mode: string;
  /** The branch of the session's own worktree, when it has one. */
  branch?: string;
}

/** A session as GET /sessions/{id} shows it, with the header's fields. */
export type LoadedSession = Omit<fold.SessionSnapshot, "messages"> &
  Omit<SessionInfo, "branch"> & { messages: ShownMessage[]; worktree?: { branch: string } };

function firstLine(s: string): string {
  const line = s.split("\n")[0] ?? "";
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/**
 * The terminal's view of a session: the state folded by the shared reducer (clients/api/session-state.ts), and
 * what only a terminal needs: the items printed once to the scrollback, and the streamed text not printed yet.
 */
export class SessionView {
  /** The session as the shared reducer folds it. */
  state = fold.initialState();
  items: Item[] = [];
  private nextKey = 1;
  session: SessionInfo | undefined;
  /** Streamed text and thinking not printed yet. */
  liveText = "";
  liveThinking = "";
  /** When a turn the daemon gave no start time for was seen starting. */
  private seenStarting: number | undefined;
  /** Calls whose confirmation the user denied, with the words their failure line uses. */
  private denied = new Map<string, string>();
  /** Bumped on every change, for React's useSyncExternalStore. */
  version = 0;
  /** Bumped when the transcript is drawn anew (a rewind): the app clears the screen and prints the items again. */
  redraws = 0;
  private listeners = new Set<() => void>();

  get running(): boolean {
    return this.state.status === "running";
  }
  set running(on: boolean) {
    this.state = { ...this.state, status: on ? "running" : "idle" };
  }
  get startedAt(): number | undefined {
    return this.running ? (this.state.startedAt ?? this.seenStarting) : undefined;
  }
  get confirmations(): readonly Confirmation[] {
    return this.state.confirmations;
  }
  set confirmations(list: readonly Confirmation[]) {
    this.state = { ...this.state, confirmations: list };
  }
  get question(): PendingQuestion | undefined {
    return this.state.question as PendingQuestion | undefined;
  }
  set question(q: PendingQuestion | undefined) {
    this.state = { ...this.state, question: q as fold.QuestionSet | undefined };
  }
  get plan(): PlanTransition | undefined {
    return this.state.planTransition;
  }
  set plan(p: PlanTransition | undefined) {
    this.state = { ...this.state, planTransition: p };
  }
  get trustRequired(): fold.TrustPrompt | undefined {
    return this.state.trust;
  }
  set trustRequired(t: fold.TrustPrompt | undefined) {
    this.state = { ...this.state, trust: t };
  }
  get todos(): readonly Todo[] {
    return this.state.todos;
  }
  get promptTokens(): number {
    return this.state.promptTokens;
  }
  get totalTokens(): number {
    return this.state.totalTokens;
  }
  /** The provider is being retried: one line, replaced by each attempt, gone once the call goes through or fails. */
  get retrying(): string | undefined {
    const r = this.state.retry;
    return r && `provider failed (${firstLine(r.reason)}); retry ${r.attempt} in ${Math.round(r.delayMs / 1000)}s`;
  }
  /** The calls running now, with the tail of their output. */
  get tools(): Map<string, RunningTool> {
    const out = new Map<string, RunningTool>();
    for (const id of this.state.running) {
      const t = this.state.tools[id];
      if (!t) continue;
      const command = parseArgs(t.args).command;
      out.set(id, {
        id,
        name: t.name,
        line: toolLine(t.name, t.args),
        output: t.output.slice(-4000),
        command: typeof command === "string" ? command : undefined,
        denied: this.denied.get(id),
      });
    }
    return out;
  }

  subscribe = (l: () => void): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  getVersion = (): number => this.version;

  changed(): void {
    this.version++;
    for (const l of this.listeners) l();
  }

  add(item: NewItem): void {
    // A new array each time: Ink's <Static> notices new items by identity.
    this.items = [...this.items, { ...item, key: this.nextKey++ } as Item];
  }

  note(text: string, tone: Tone = "dim"): void {
    this.add({ kind: "note", text, tone });
    this.changed();
  }

  /** Prints what was streaming (thinking, then text) for good. */
  flushLive(): void {
    if (this.liveThinking.trim()) this.add({ kind: "thinking", text: this.liveThinking.trim() });
    if (this.liveText.trim()) this.add({ kind: "assistant", text: this.liveText.replace(/\s+$/, "") });
    this.liveThinking = "";
    this.liveText = "";
  }

  /** A session was opened (or switched to): its header and recent history. */
  load(s: LoadedSession): void {
    this.flushLive();
    this.denied.clear();
    this.state = fold.loaded(fold.initialState(), { ...s, messages: s.messages as fold.StoredMessage[] });
    this.seenStarting = undefined;
    this.session = {
      id: s.id,
      title: s.title,
      cwd: s.cwd,
      persona: s.persona,
      model: s.model,
      mode: s.mode,
      branch: s.worktree?.branch,
    };
    this.add({ kind: "note", text: this.heading(), tone: "info" });
    if (s.hasMoreHistory) this.add({ kind: "note", text: "… earlier messages not shown", tone: "dim" });
    this.addMessages(s.messages);
    // Why the last turn failed, as it was said live (the daemon keeps it until the next turn starts).
    for (const e of this.state.transcript) if (e.kind === "error") this.print(e);
    this.changed();
  }

  private heading(): string {
    const s = this.session;
    if (!s) return "";
    return `session ${s.id}${s.title ? ` · ${s.title}` : ""} · ${s.cwd}${s.branch ? ` · worktree branch ${s.branch}` : ""}`;
  }

  private addMessages(messages: ShownMessage[]): void {
    for (const item of messageItems(messages)) this.add(item);
  }

  /**
   * A rewind (or its /redo) changed the history: the transcript is drawn again from the event's messages, with what
   * happened to the files. `redraws` tells the app to clear the screen and print the items again.
   */
  private redraw(ev: StreamEvent): void {
    this.liveText = "";
    this.liveThinking = "";
    this.items = [];
    this.add({ kind: "note", text: this.heading(), tone: "info" });
    if (ev.hasMoreHistory) this.add({ kind: "note", text: "… earlier messages not shown", tone: "dim" });
    this.addMessages(Array.isArray(ev.messages) ? (ev.messages as ShownMessage[]) : []);
    this.add({ kind: "note", text: describeRewind(ev), tone: "ok" });
    this.redraws++;
  }

  /** Applies one event; returns without notifying (the caller batches `changed`). */
  apply(ev: StreamEvent): void {
    const prev = this.state;
    this.state = fold.reduce(prev, ev);
    if (!this.running) this.seenStarting = undefined;
    else if (ev.type === "status") this.seenStarting ??= Date.now();
    if (this.state.epoch !== prev.epoch) {
      this.redraw(ev);
      return;
    }
    // The streamed text is printed as it comes (finished blocks), so it is handled by event, not by entry.
    if (ev.type === "token") this.stream(String(ev.text ?? ""));
    else if (ev.type === "thinking") this.liveThinking += String(ev.text ?? "");
    else if (ev.type === "tool_start") this.flushLive();
    for (const e of this.state.transcript.slice(prev.transcript.length)) this.print(e);
    if (ev.type === "tool_end") this.toolEnded(ev);
    this.follow(ev);
  }

  /** Text streamed: its finished blocks are printed, the rest stays live. */
  private stream(text: string): void {
    if (this.liveThinking.trim()) {
      this.add({ kind: "thinking", text: this.liveThinking.trim() });
      this.liveThinking = "";
    }
    this.liveText += text;
    let [done, rest] = splitFinished(this.liveText);
    // A very long block without a blank line: print its finished lines anyway, so the live part stays small.
    if (!done && rest.length > LIVE_MAX && !/^\s*(```|~~~)/m.test(rest)) {
      const cut = rest.lastIndexOf("\n");
      if (cut > 0) [done, rest] = [rest.slice(0, cut), rest.slice(cut + 1)];
    }
    if (done.trim()) {
      this.add({ kind: "assistant", text: done });
      this.liveText = rest;
    }
  }

  private toolEnded(ev: StreamEvent): void {
    const id = String(ev.id);
    const t = this.state.tools[id];
    const failed = ev.status === "error";
    this.add({
      kind: "tool",
      line: t ? toolLine(t.name, t.args) : toolLine(String(ev.name), ev.args),
      status: failed ? "error" : "ok",
      detail: failed ? (this.denied.get(id) ?? toolError(ev.result as ToolResultLike)) : undefined,
    });
    this.denied.delete(id);
  }

  /** Prints one new transcript entry. */
  private print(e: fold.Entry): void {
    if (e.kind === "resolved") this.resolved(e);
    else if (e.kind === "end") this.ended(e);
    else if (e.kind === "turn_meta") {
      if (e.model && this.session) this.session.model = e.model;
    } else {
      // What the user or the model says, or an error, follows what was streaming; steering is read mid-stream.
      if (e.kind === "assistant" || e.kind === "error" || (e.kind === "user" && e.via !== "steering")) this.flushLive();
      const item = entryItem(e);
      if (item) this.add(item);
    }
  }

  private resolved(e: Extract<fold.Entry, { kind: "resolved" }>): void {
    const how = e.by === "timeout" ? " (timed out)" : e.by === "abort" ? " (turn aborted)" : "";
    // A denied call's own ✗ line says it was denied (once); a note only when no running call is found.
    const call = e.allowed ? undefined : [...this.tools.values()].find((t) => t.command === e.command);
    if (call) {
      this.denied.set(call.id, `denied${how === "" ? " by you" : how}`);
      return;
    }
    this.add({
      kind: "note",
      text: `${e.allowed ? "allowed" : "denied"}${how}: ${e.command}`,
      tone: e.allowed ? "ok" : "warn",
    });
  }

  private ended(e: Extract<fold.Entry, { kind: "end" }>): void {
    this.flushLive();
    for (const id of e.interrupted) {
      const t = this.state.tools[id];
      if (t) this.add({ kind: "tool", line: toolLine(t.name, t.args), status: "error", detail: "interrupted" });
    }
    this.denied.clear();
    const last = this.items.at(-1);
    if (e.reason === "aborted") this.add({ kind: "note", text: "turn aborted", tone: "warn" });
    else if (e.reason === "error" && !(last?.kind === "note" && last.tone === "error"))
      this.add({ kind: "note", text: "turn ended with an error", tone: "error" });
    else if (e.reason === "disconnected")
      this.add({ kind: "note", text: "the provider's stream broke off (partial answer kept)", tone: "warn" });
  }

  /** The header follows the session: its mode, title, model, directory and branch. */
  private follow(ev: StreamEvent): void {
    if (!this.session) return;
    if (ev.type === "status" && typeof ev.mode === "string") this.session.mode = ev.mode;
    if (ev.type !== "session_update") return;
    const s = ev.session as Partial<SessionInfo> | undefined;
    if (!s) return;
    if (s.title) this.session.title = s.title;
    if (s.mode) this.session.mode = s.mode;
    if (s.model) this.session.model = s.model;
    if (s.persona) this.session.persona = s.persona;
    // The worktree moved the session (made, merged away, discarded): its directory and branch follow.
    if (s.cwd) {
      this.session.cwd = s.cwd;
      this.session.branch = (s as { worktree?: { branch?: string } }).worktree?.branch;
    }
  }
}

/** The printed line of a transcript entry that is one line (or none). */
function entryItem(e: fold.Entry): NewItem | undefined {
  switch (e.kind) {
    case "user":
      // Steering is read by the running turn; a queued message starts the next one.
      return e.via === "steering"
        ? { kind: "note", text: `the agent read: ${e.text}`, tone: "info" }
        : { kind: "user", text: e.text };
    case "error":
      return { kind: "note", text: `error: ${e.message}`, tone: "error" };
    case "notice":
      return { kind: "note", text: e.text, tone: "dim" };
    case "compaction":
      return { kind: "note", text: `compacted ${e.messagesCompacted ?? "older"} messages`, tone: "dim" };
    default:
      return undefined;
  }
}
