/**
 * The view of a session, fed by its event stream: printed items (append-only, they go to the scrollback once),
 * the live part of the running turn (text and thinking being streamed, running tools with their output tail),
 * pending decisions and the status line's figures. Framework-free, so it is unit-tested without a terminal.
 */
import type { StreamEvent } from "../../api/events.js";
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

export interface Confirmation {
  id: string;
  command: string;
  reason: string;
  tool?: string;
  /** "dangerous", "network", "not sandboxed", "rule". */
  reasons?: string[];
  suggestedRule?: string;
}

export interface PendingQuestion {
  id: string;
  questions: QuestionSpec[];
}

export interface PlanTransition {
  path?: string;
  summary?: string;
}

export interface Todo {
  content: string;
  status: string;
}

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

/** Events after which a retry line is stale: the call produced something, or the turn is over. */
const PROGRESS = new Set(["token", "thinking", "usage", "assistant_message", "tool_start", "error", "end"]);

function firstLine(s: string): string {
  const line = s.split("\n")[0] ?? "";
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

export class SessionView {
  items: Item[] = [];
  private nextKey = 1;
  session: SessionInfo | undefined;
  running = false;
  startedAt: number | undefined;
  liveText = "";
  liveThinking = "";
  /** The provider is being retried: one line, replaced by each attempt, gone once the call goes through or fails. */
  retrying: string | undefined;
  tools = new Map<string, RunningTool>();
  confirmations: Confirmation[] = [];
  /** Commands of every confirmation seen, for the line that says how it was resolved. */
  private confirmCommands = new Map<string, string>();
  question: PendingQuestion | undefined;
  plan: PlanTransition | undefined;
  todos: Todo[] = [];
  promptTokens = 0;
  totalTokens = 0;
  trustRequired: { path: string; resources: Record<string, string[]> } | undefined;
  /** Bumped on every change, for React's useSyncExternalStore. */
  version = 0;
  /** Bumped when the transcript is drawn anew (a rewind): the app clears the screen and prints the items again. */
  redraws = 0;
  private listeners = new Set<() => void>();

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
  load(s: {
    id: string;
    title?: string;
    cwd: string;
    persona: string;
    model: string;
    mode: string;
    status: string;
    turnStartedAt?: number | null;
    usage?: { totalTokens?: number };
    messages: ShownMessage[];
    hasMoreHistory?: boolean;
    lastError?: { message: string; afterSeq: number };
    worktree?: { branch: string };
  }): void {
    this.flushLive();
    this.tools.clear();
    this.confirmations = [];
    this.question = undefined;
    this.plan = undefined;
    this.todos = [];
    this.session = {
      id: s.id,
      title: s.title,
      cwd: s.cwd,
      persona: s.persona,
      model: s.model,
      mode: s.mode,
      branch: s.worktree?.branch,
    };
    this.running = s.status === "running";
    this.startedAt = s.turnStartedAt ?? undefined;
    this.totalTokens = s.usage?.totalTokens ?? 0;
    this.add({ kind: "note", text: this.heading(), tone: "info" });
    if (s.hasMoreHistory) this.add({ kind: "note", text: "… earlier messages not shown", tone: "dim" });
    this.addMessages(s.messages);
    // Why the last turn failed, as it was said live (the daemon keeps it until the next turn starts).
    if (s.lastError) this.add({ kind: "note", text: `error: ${s.lastError.message}`, tone: "error" });
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
    this.tools.clear();
    this.items = [];
    this.add({ kind: "note", text: this.heading(), tone: "info" });
    if (ev.hasMoreHistory) this.add({ kind: "note", text: "… earlier messages not shown", tone: "dim" });
    this.addMessages(Array.isArray(ev.messages) ? (ev.messages as ShownMessage[]) : []);
    this.add({ kind: "note", text: describeRewind(ev), tone: "ok" });
    this.redraws++;
  }

  /** Applies one event; returns without notifying (the caller batches `changed`). */
  apply(ev: StreamEvent): void {
    if (PROGRESS.has(ev.type)) this.retrying = undefined;
    switch (ev.type) {
      case "status": {
        if (ev.status === "running") {
          this.running = true;
          this.startedAt = typeof ev.startedAt === "number" ? ev.startedAt : (this.startedAt ?? Date.now());
        } else if (ev.status === "idle") {
          this.running = false;
          this.startedAt = undefined;
        }
        if (typeof ev.mode === "string" && this.session) this.session.mode = ev.mode;
        // The first frame carries the pending decisions.
        if (ev.question) this.question = ev.question as PendingQuestion;
        if (Array.isArray(ev.pendingConfirmations)) {
          this.confirmations = (ev.pendingConfirmations as Confirmation[]).map((c) => ({ ...c }));
          for (const c of this.confirmations) this.confirmCommands.set(c.id, c.command);
        }
        if (ev.planTransition) this.plan = ev.planTransition as PlanTransition;
        if (Array.isArray(ev.todos)) this.todos = ev.todos as Todo[];
        if (ev.lastSeq !== undefined) this.trustRequired = trustPrompt(ev.projectTrust);
        break;
      }
      case "user_message": {
        const m = ev.message as { content?: string } | undefined;
        this.flushLive();
        this.add({ kind: "user", text: m?.content ?? "" });
        break;
      }
      case "token": {
        if (this.liveThinking.trim()) {
          this.add({ kind: "thinking", text: this.liveThinking.trim() });
          this.liveThinking = "";
        }
        this.liveText += String(ev.text ?? "");
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
        break;
      }
      case "thinking":
        this.liveThinking += String(ev.text ?? "");
        break;
      case "assistant_message":
        this.flushLive();
        break;
      case "tool_start": {
        this.flushLive();
        const id = String(ev.id);
        const command = parseArgs(ev.args).command;
        this.tools.set(id, {
          id,
          name: String(ev.name),
          line: toolLine(String(ev.name), ev.args),
          output: "",
          command: typeof command === "string" ? command : undefined,
        });
        break;
      }
      case "tool_output": {
        const t = this.tools.get(String(ev.toolCallId));
        if (t) t.output = (t.output + String(ev.text ?? "")).slice(-4000);
        break;
      }
      case "tool_end": {
        const id = String(ev.id);
        const t = this.tools.get(id);
        this.tools.delete(id);
        const failed = ev.status === "error";
        this.add({
          kind: "tool",
          line: t?.line ?? toolLine(String(ev.name), ev.args),
          status: failed ? "error" : "ok",
          detail: failed ? (t?.denied ?? toolError(ev.result as ToolResultLike)) : undefined,
        });
        break;
      }
      case "bash_confirm":
        this.confirmCommands.set(String(ev.id), String(ev.command ?? ""));
        if (!this.confirmations.some((c) => c.id === ev.id)) {
          this.confirmations.push({
            id: String(ev.id),
            command: String(ev.command ?? ""),
            reason: String(ev.reason ?? ""),
            tool: typeof ev.tool === "string" ? ev.tool : undefined,
            reasons: Array.isArray(ev.reasons) ? ev.reasons.map(String) : undefined,
            suggestedRule: typeof ev.suggestedRule === "string" ? ev.suggestedRule : undefined,
          });
        }
        break;
      case "bash_confirm_resolved": {
        const command = this.confirmCommands.get(String(ev.id)) ?? "";
        this.confirmations = this.confirmations.filter((x) => x.id !== ev.id);
        const how = ev.by === "timeout" ? " (timed out)" : ev.by === "abort" ? " (turn aborted)" : "";
        // A denied call's own ✗ line says it was denied (once); a note only when no running call is found.
        const call = ev.allowed ? undefined : [...this.tools.values()].find((t) => t.command === command);
        if (call) {
          call.denied = `denied${how === "" ? " by you" : how}`;
          break;
        }
        this.add({
          kind: "note",
          text: `${ev.allowed ? "allowed" : "denied"}${how}: ${command}`,
          tone: ev.allowed ? "ok" : "warn",
        });
        break;
      }
      case "decision_state":
        this.question = ev.question as PendingQuestion | undefined;
        this.plan = ev.planTransition as PlanTransition | undefined;
        break;
      case "todos_updated":
        this.todos = Array.isArray(ev.todos) ? (ev.todos as Todo[]) : [];
        break;
      case "usage": {
        const u = ev.usage as { promptTokens?: number; totalTokens?: number } | undefined;
        if (u?.promptTokens) this.promptTokens = u.promptTokens;
        if (u?.totalTokens) this.totalTokens += u.totalTokens;
        break;
      }
      case "retry":
        // One line that updates in place (the live part), not a new copy of the error per attempt.
        this.retrying = `provider failed (${firstLine(String(ev.reason ?? "error"))}); retry ${ev.attempt} in ${Math.round(Number(ev.delayMs ?? 0) / 1000)}s`;
        break;
      case "error":
        this.flushLive();
        this.add({ kind: "note", text: `error: ${ev.message ?? "unknown"}`, tone: "error" });
        break;
      case "notice":
        this.add({ kind: "note", text: String(ev.message ?? ""), tone: "dim" });
        break;
      case "compaction":
        this.add({ kind: "note", text: `compacted ${ev.messagesCompacted ?? "older"} messages`, tone: "dim" });
        break;
      case "steering_injected": {
        // Queued messages (followup_injected) show as the user_message that follows; steering has none.
        const msgs = Array.isArray(ev.messages) ? (ev.messages as unknown[]) : [];
        const texts = msgs.map((m) => (typeof m === "string" ? m : String((m as { content?: unknown }).content ?? "")));
        this.add({ kind: "note", text: `the agent read: ${texts.join(" / ")}`, tone: "info" });
        break;
      }
      case "end": {
        this.flushLive();
        for (const t of this.tools.values())
          this.add({ kind: "tool", line: t.line, status: "error", detail: "interrupted" });
        this.tools.clear();
        this.confirmations = [];
        const reason = String(ev.reason);
        const last = this.items.at(-1);
        if (reason === "aborted") this.add({ kind: "note", text: "turn aborted", tone: "warn" });
        else if (reason === "error" && !(last?.kind === "note" && last.tone === "error"))
          this.add({ kind: "note", text: "turn ended with an error", tone: "error" });
        else if (reason === "disconnected")
          this.add({ kind: "note", text: "the provider's stream broke off (partial answer kept)", tone: "warn" });
        break;
      }
      case "session_update": {
        const s = ev.session as Partial<SessionInfo> | undefined;
        if (s && this.session) {
          if (s.title) this.session.title = s.title;
          if (s.mode) this.session.mode = s.mode;
          if (s.model) this.session.model = s.model;
          if (s.persona) this.session.persona = s.persona;
          // The worktree moved the session (made, merged away, discarded): its directory and branch follow.
          if (s.cwd) {
            this.session.cwd = s.cwd;
            this.session.branch = (s as { worktree?: { branch?: string } }).worktree?.branch;
          }
          // Decided elsewhere (another client): the prompt goes away.
          if (!("projectTrust" in s)) this.trustRequired = undefined;
        }
        break;
      }
      case "rewind":
      case "redo":
        this.redraw(ev);
        break;
      case "turn_meta":
        if (typeof ev.model === "string" && this.session) this.session.model = ev.model;
        break;
      case "project_trust_required":
        this.trustRequired = {
          path: String(ev.path ?? ev.cwd ?? ""),
          resources: (ev.resources ?? {}) as Record<string, string[]>,
        };
        break;
    }
  }
}

function trustPrompt(v: unknown): SessionView["trustRequired"] {
  if (!v || typeof v !== "object") return undefined;
  const t = v as { path?: unknown; resources?: unknown };
  return { path: String(t.path ?? ""), resources: (t.resources ?? {}) as Record<string, string[]> };
}
