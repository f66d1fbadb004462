/**
 * One session's state folded from its event stream, for every client (web UI, terminal, ACP): a pure reducer,
 * framework-free and typed from the published OpenAPI document. `reduce(state, event)` returns a new state (the
 * old one is never changed), so a client can compare the two and redraw only what changed.
 *
 * The transcript is append-only between redraws: a load, a rewind or a redo replaces it and bumps `epoch`; any
 * other event only appends entries (or changes a tool call, kept apart in `tools`). How an entry looks is each
 * client's business.
 */
import {
  type Confirmation,
  confirmation,
  type Entry,
  type PlanTransition,
  type QuestionSet,
  type Schemas,
  type StoredMessage,
  type Todo,
  type ToolCall,
  type TrustPrompt,
  textOf,
  trustOf,
} from "./session-types.js";

export * from "./session-types.js";

/** A frame as a client receives it: typed by the contract, read loosely (unknown types are ignored). */
export type EventFrame = { type: string; [field: string]: unknown };

export interface SessionState {
  status: "idle" | "running" | "error";
  /** When the running turn started (epoch ms), as the daemon says. */
  startedAt?: number;
  mode: "build" | "plan";
  /** The running model call's text and thinking so far (gone once its message is complete). */
  liveText: string;
  liveThinking: string;
  /** The provider is being retried; cleared once the call produces something or the turn ends. */
  retry?: { reason: string; attempt: number; delayMs: number };
  transcript: readonly Entry[];
  /** Bumped whenever the transcript is replaced rather than appended to. */
  epoch: number;
  oldestSeq: number | null;
  hasMoreHistory: boolean;
  /** Every tool call known, by id. */
  tools: Readonly<Record<string, ToolCall>>;
  /** Ids of the calls started and not ended in this turn, oldest first. */
  running: readonly string[];
  confirmations: readonly Confirmation[];
  /** The command of every confirmation seen, by id (to say how one was resolved). */
  confirmCommands: Readonly<Record<string, string>>;
  question?: QuestionSet;
  planTransition?: PlanTransition;
  todos: readonly Todo[];
  /** The project awaits a trust decision. */
  trust?: TrustPrompt;
  /** The last call's prompt size and the session's tokens in all. */
  promptTokens: number;
  totalTokens: number;
  /** Message seqs already shown: a replayed or re-announced message is not shown twice. */
  seenSeqs: ReadonlySet<number>;
  /** The model's generation time in the running turn, for its footer. */
  generationMs: number;
  /** The stream's last frame applied (or the read's `lastSeq`): a frame replayed again after a reconnect is skipped. */
  lastSeq: number;
}

export function initialState(): SessionState {
  return {
    status: "idle",
    mode: "build",
    liveText: "",
    liveThinking: "",
    transcript: [],
    epoch: 0,
    oldestSeq: null,
    hasMoreHistory: false,
    tools: {},
    running: [],
    confirmations: [],
    confirmCommands: {},
    todos: [],
    promptTokens: 0,
    totalTokens: 0,
    seenSeqs: new Set(),
    generationMs: 0,
    lastSeq: 0,
  };
}

/** A session as GET /sessions/{id} shows it (the fields the fold reads). */
export interface SessionSnapshot {
  status: string;
  mode?: string;
  turnStartedAt?: number | null;
  lastSeq?: number;
  messages: StoredMessage[];
  oldestSeq?: number | null;
  hasMoreHistory?: boolean;
  streaming?: unknown[] | null;
  usage?: { totalTokens?: number };
  lastError?: { message: string; afterSeq: number; at?: string };
  pendingConfirmations?: unknown[];
  question?: unknown;
  planTransition?: unknown;
  todos?: unknown;
  projectTrust?: unknown;
}

/** The state of a session just read: its recent history, the running turn's partial text, pending decisions. */
export function loaded(state: SessionState, s: SessionSnapshot): SessionState {
  const next = redrawn(state, s.messages, s.oldestSeq ?? null, s.hasMoreHistory ?? false);
  const streaming = (s.streaming ?? []) as Array<{ kind?: string; text?: string }>;
  const text = (kind: string) =>
    streaming
      .filter((b) => b.kind === kind)
      .map((b) => b.text ?? "")
      .join("");
  // Why the last turn failed, where it failed: after the last message (unless a later turn has begun).
  const lastSeq = s.messages.reduce((n, m) => Math.max(n, m.seq ?? 0), 0);
  const failed = s.lastError && s.lastError.afterSeq >= lastSeq ? s.lastError : undefined;
  return withPending(
    {
      ...next,
      status: statusOf(s.status),
      startedAt: s.turnStartedAt ?? undefined,
      mode: s.mode === "plan" ? "plan" : "build",
      liveText: text("content"),
      liveThinking: text("thinking"),
      totalTokens: s.usage?.totalTokens ?? 0,
      running: [],
      lastSeq: s.lastSeq ?? state.lastSeq,
      transcript: failed
        ? [...next.transcript, { kind: "error", message: failed.message, at: failed.at }]
        : next.transcript,
    },
    s,
  );
}

/** Older history paged in: its messages go first (those already shown are skipped). */
export function prepended(
  state: SessionState,
  page: { messages: StoredMessage[]; oldestSeq: number | null; hasMoreHistory: boolean },
): { state: SessionState; added: StoredMessage[] } {
  const added = page.messages.filter((m) => m.seq === undefined || !state.seenSeqs.has(m.seq));
  const stored = remember(state, added);
  return {
    state: {
      ...stored,
      transcript: [...added.map((message) => ({ kind: "stored" as const, message })), ...state.transcript],
      oldestSeq: page.oldestSeq,
      hasMoreHistory: page.hasMoreHistory,
    },
    added,
  };
}

/** Applies one event of the session's stream. */
export function reduce(state: SessionState, ev: EventFrame): SessionState {
  // Frames carry the session's persisted `seq`; the present-state frame that opens a stream has none.
  if (typeof ev.seq === "number" && ev.seq <= state.lastSeq) return state;
  const s = {
    ...state,
    lastSeq: typeof ev.seq === "number" ? ev.seq : state.lastSeq,
    retry: PROGRESS.has(ev.type) ? undefined : state.retry,
  };
  const e = ev as Record<string, unknown>;
  switch (ev.type) {
    case "status": {
      const status = statusOf(e.status);
      let next: SessionState = { ...s, status };
      if (status === "running") next.startedAt = typeof e.startedAt === "number" ? e.startedAt : s.startedAt;
      else next.startedAt = undefined;
      if (e.mode === "build" || e.mode === "plan") next.mode = e.mode;
      if (status === "idle") next = { ...next, liveText: "", liveThinking: "" };
      // The first frame of every (re)connection carries the pending decisions.
      return "lastSeq" in e ? withPending(next, e) : next;
    }
    case "rewind":
    case "redo": {
      // The event carries the history after it: drawn anew in stream order, so what follows is never lost.
      const view = ev as Schemas["RewindEvent"];
      const messages = Array.isArray(view.messages) ? (view.messages as StoredMessage[]) : [];
      return { ...redrawn(s, messages, view.oldestSeq ?? null, view.hasMoreHistory ?? false), liveText: "" };
    }
    case "user_message": {
      const m = (e.message ?? {}) as { content?: unknown; seq?: number };
      return withUsers(s, [m], undefined);
    }
    case "steering_injected":
    case "followup_injected": {
      const msgs = Array.isArray(e.messages) ? (e.messages as Array<{ content?: unknown; seq?: number }>) : [];
      return withUsers(s, msgs, ev.type === "steering_injected" ? "steering" : "followup");
    }
    case "token":
      return { ...s, liveText: s.liveText + String(e.text ?? "") };
    case "thinking":
      return { ...s, liveThinking: s.liveThinking + String(e.text ?? "") };
    case "retry":
      return {
        ...s,
        retry: { reason: String(e.reason ?? "error"), attempt: Number(e.attempt), delayMs: Number(e.delayMs ?? 0) },
      };
    case "usage": {
      const u = (e.usage ?? {}) as { promptTokens?: number; totalTokens?: number };
      return {
        ...s,
        promptTokens: u.promptTokens || s.promptTokens,
        totalTokens: s.totalTokens + (u.totalTokens || 0),
      };
    }
    case "assistant_message": {
      const calls = (e.toolCalls as Array<{ id: string; name: string; arguments?: string }> | undefined) ?? [];
      const tools = { ...s.tools };
      for (const c of calls) tools[c.id] = tool(c.id, c.name, c.arguments ?? "{}", "pending");
      return append(
        {
          ...s,
          tools,
          liveText: "",
          liveThinking: "",
          generationMs: s.generationMs + Number(e.generationMs ?? 0),
        },
        {
          kind: "assistant",
          text: String(e.content ?? ""),
          thinking: e.thinking ? String(e.thinking) : undefined,
          toolCallIds: calls.map((c) => c.id),
        },
      );
    }
    case "tool_start":
    case "tool_end": {
      const id = String(e.id);
      const known = s.tools[id];
      const base = known ?? tool(id, String(e.name), String(e.args ?? "{}"), "running");
      const r = e.result as { content?: unknown } | undefined;
      const changed: ToolCall =
        ev.type === "tool_start"
          ? { ...base, status: "running", args: known ? base.args : String(e.args ?? "{}") }
          : { ...base, status: e.status === "error" ? "error" : "ok", result: textOf(r?.content) };
      const running =
        ev.type === "tool_start" ? [...s.running.filter((x) => x !== id), id] : s.running.filter((x) => x !== id);
      const next = { ...s, tools: { ...s.tools, [id]: changed }, running };
      // A call no message announced (it started before a reconnect) gets its own entry.
      return known ? next : append(next, { kind: "assistant", text: "", toolCallIds: [id] });
    }
    case "tool_output": {
      const id = String(e.toolCallId);
      const t = s.tools[id];
      return t ? { ...s, tools: { ...s.tools, [id]: { ...t, output: t.output + String(e.text ?? "") } } } : s;
    }
    case "bash_confirm": {
      const c = confirmation(e);
      return {
        ...s,
        confirmations: [...s.confirmations.filter((x) => x.id !== c.id), c],
        confirmCommands: { ...s.confirmCommands, [c.id]: c.command },
      };
    }
    case "bash_confirm_resolved": {
      const id = String(e.id);
      const next = { ...s, confirmations: s.confirmations.filter((c) => c.id !== id) };
      return append(next, {
        kind: "resolved",
        id,
        command: s.confirmCommands[id] ?? "",
        allowed: e.allowed === true,
        by: String(e.by ?? "user"),
      });
    }
    case "decision_state":
      return {
        ...s,
        question: (e.question as QuestionSet | undefined) ?? undefined,
        planTransition: (e.planTransition as PlanTransition | undefined) ?? undefined,
      };
    case "todos_updated":
      return { ...s, todos: Array.isArray(e.todos) ? (e.todos as Todo[]) : [] };
    case "turn_meta":
      return append(
        { ...s, generationMs: 0 },
        { kind: "turn_meta", model: String(e.model ?? ""), generationMs: s.generationMs },
      );
    case "end":
      return append(
        { ...s, confirmations: [], running: [] },
        { kind: "end", reason: String(e.reason), interrupted: [...s.running] },
      );
    case "error":
      return append(s, { kind: "error", message: String(e.message ?? "unknown") });
    case "notice":
      return append(s, { kind: "notice", text: String(e.message ?? "") });
    case "compaction":
      return append(s, { kind: "compaction", messagesCompacted: e.messagesCompacted });
    case "session_update": {
      const summary = e.session as Partial<Schemas["SessionSummary"]> | undefined;
      if (!summary) return s;
      const mode = summary.mode === "plan" || summary.mode === "build" ? summary.mode : s.mode;
      // Decided elsewhere (another client): the prompt goes away.
      return { ...s, mode, trust: trustOf(summary.projectTrust) };
    }
    case "project_trust_required":
      return {
        ...s,
        trust: { path: String(e.path ?? e.cwd ?? ""), resources: (e.resources ?? {}) as Record<string, string[]> },
      };
    default:
      return s;
  }
}

/** Events after which a retry line is stale: the call produced something, or the turn is over. */
const PROGRESS = new Set(["token", "thinking", "usage", "assistant_message", "tool_start", "error", "end"]);

function statusOf(v: unknown): SessionState["status"] {
  return v === "running" || v === "error" ? v : "idle";
}

function tool(id: string, name: string, args: string, status: ToolCall["status"]): ToolCall {
  return { id, name, args, status, result: "", output: "" };
}

function append(s: SessionState, entry: Entry): SessionState {
  return { ...s, transcript: [...s.transcript, entry] };
}

/** User messages not shown yet (a queued follow-up is announced, then again by its user_message: same seq). */
function withUsers(
  s: SessionState,
  msgs: Array<{ content?: unknown; seq?: number }>,
  via: "steering" | "followup" | undefined,
): SessionState {
  const fresh = msgs.filter((m) => typeof m.seq !== "number" || !s.seenSeqs.has(m.seq));
  if (!fresh.length) return s;
  const seen = new Set(s.seenSeqs);
  for (const m of fresh) if (typeof m.seq === "number") seen.add(m.seq);
  const entries = fresh.map(
    (m): Entry => ({ kind: "user", text: textOf(m.content ?? m), seq: m.seq, ...(via ? { via } : {}) }),
  );
  return { ...s, seenSeqs: seen, transcript: [...s.transcript, ...entries] };
}

/** The transcript replaced by a page of history. */
function redrawn(s: SessionState, messages: StoredMessage[], oldestSeq: number | null, more: boolean): SessionState {
  const cleared = { ...s, tools: {}, seenSeqs: new Set<number>(), running: [] };
  return {
    ...remember(cleared, messages),
    transcript: messages.map((message) => ({ kind: "stored" as const, message })),
    epoch: s.epoch + 1,
    oldestSeq,
    hasMoreHistory: more,
    liveThinking: "",
  };
}

/** The seqs and tool calls of stored messages. */
function remember(s: SessionState, messages: StoredMessage[]): SessionState {
  const seen = new Set(s.seenSeqs);
  const tools = { ...s.tools };
  for (const m of messages) {
    if (typeof m.seq === "number") seen.add(m.seq);
    for (const t of m.toolCalls ?? []) tools[t.id] = { ...tool(t.id, t.name, t.args, t.status), result: t.result };
  }
  return { ...s, seenSeqs: seen, tools };
}

/** Pending decisions, todos and the trust prompt, as a present-state frame (or a read session) carries them. */
function withPending(s: SessionState, e: Record<string, unknown> | SessionSnapshot): SessionState {
  const f = e as Record<string, unknown>;
  const pending = Array.isArray(f.pendingConfirmations) ? (f.pendingConfirmations as Confirmation[]) : [];
  const commands = { ...s.confirmCommands };
  for (const c of pending) commands[c.id] = c.command;
  return {
    ...s,
    confirmations: pending.map((c) => ({ ...c })),
    confirmCommands: commands,
    question: (f.question as QuestionSet | undefined) ?? undefined,
    planTransition: (f.planTransition as PlanTransition | undefined) ?? undefined,
    todos: Array.isArray(f.todos) ? (f.todos as Todo[]) : s.todos,
    trust: trustOf(f.projectTrust),
  };
}
