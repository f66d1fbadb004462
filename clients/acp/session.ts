/**
 * One agentd session seen through ACP: its event stream (opened once, kept while the editor has the session) is
 * turned into `session/update` notifications; a prompt is a chat message whose turn ends with exactly one `end`.
 * Decisions the turn waits for (confirmations, questions) and editor file requests are asked of the editor as
 * they appear on the stream, whenever that is.
 */
import { randomUUID } from "node:crypto";
import {
  type AgentContext,
  type ClientCapabilities,
  type ContentBlock,
  methods,
  RequestError,
  type SessionUpdate,
  type StopReason,
} from "@agentclientprotocol/sdk";
import { errorText, ok } from "../api/client.js";
import type { DaemonConnection } from "../api/daemon.js";
import { type StreamEvent, type Subscription, subscribe } from "../api/events.js";
import { initialState, reduce, type SessionState } from "../api/session-state.js";
import { answerQuestion, confirmCommand } from "./decisions.js";
import { serveEditorRequest } from "./editor-fs.js";
import { type AgentdMode, runningTools, stopReason, UpdateMapper } from "./updates.js";

export interface SessionDeps {
  conn: DaemonConnection;
  client: AgentContext;
  caps: ClientCapabilities;
  log: (msg: string) => void;
  /** Tokens of the model's context window, for usage updates. */
  contextWindow: number;
}

interface Turn {
  clientMessageId: string;
  /** Set once the stream shows the turn our message started (or when it was steered into a running one). */
  ours: boolean;
  /** session/cancel arrived before the daemon accepted the message: abort once it has. */
  cancelled?: boolean;
  /** The daemon answered the chat POST. */
  accepted?: boolean;
  resolve: (r: StopReason) => void;
  reject: (err: Error) => void;
  lastError?: string;
}

/** Prompt content blocks as the text (and images) of one agentd chat message. */
export function promptToChat(blocks: ContentBlock[]): { text: string; images: string[] } {
  const parts: string[] = [];
  const images: string[] = [];
  for (const b of blocks) {
    if (b.type === "text") parts.push(b.text);
    else if (b.type === "image") images.push(`data:${b.mimeType};base64,${b.data}`);
    else if (b.type === "resource_link") parts.push(`[@${b.name}](${b.uri})`);
    else if (b.type === "resource") {
      const r = b.resource as { uri: string; text?: string; mimeType?: string | null };
      if (typeof r.text === "string") parts.push(`<context uri="${r.uri}">\n${r.text}\n</context>`);
      else parts.push(`[attached: ${r.uri}]`);
    }
  }
  return { text: parts.join("\n"), images };
}

export class AcpSession {
  mode: AgentdMode = "build";
  private sub: Subscription | undefined;
  private turn: Turn | undefined;
  private readonly mapper: UpdateMapper;
  /** The session folded from its stream by the shared reducer (clients/api/session-state.ts). */
  private state: SessionState = initialState();
  /** Notifications are sent in stream order. */
  private chain: Promise<void> = Promise.resolve();
  private readonly asked = new Set<string>();
  /** Decisions the editor is being asked now, to withdraw when they are settled elsewhere (web UI, timeout). */
  private readonly open = new Map<string, AbortController>();
  private openQuestion: string | undefined;

  constructor(
    readonly id: string,
    readonly cwd: string,
    private readonly deps: SessionDeps,
  ) {
    this.mapper = new UpdateMapper(cwd);
  }

  get api() {
    return this.deps.conn.api;
  }

  /** Opens the event stream; resolves with the first frame (the session's present state). */
  connect(): Promise<StreamEvent> {
    return new Promise((resolve) => {
      let first = true;
      this.sub = subscribe(this.deps.conn, this.id, (ev) => {
        if (first && ev.type === "status") {
          first = false;
          if (ev.mode === "plan" || ev.mode === "build") this.mode = ev.mode;
          resolve(ev);
        }
        this.onEvent(ev);
      });
    });
  }

  close(): void {
    this.sub?.close();
    this.sub = undefined;
    this.turn?.resolve("cancelled");
    this.turn = undefined;
  }

  notify(update: SessionUpdate): Promise<void> {
    const next = this.chain.then(() =>
      this.deps.client
        .notify(methods.client.session.update, { sessionId: this.id, update })
        .catch((err: unknown) => this.deps.log(`session/update failed: ${(err as Error).message}`)),
    );
    this.chain = next;
    return next;
  }

  /** Sends a chat message and resolves with the stop reason when its turn ends. */
  async prompt(blocks: ContentBlock[]): Promise<StopReason> {
    if (this.turn) throw RequestError.invalidRequest(undefined, "A prompt is already running in this session");
    const { text, images } = promptToChat(blocks);
    if (!text.trim() && !images.length) throw RequestError.invalidParams(undefined, "The prompt is empty");
    const clientMessageId = randomUUID();
    const done = new Promise<StopReason>((resolve, reject) => {
      this.turn = { clientMessageId, ours: false, resolve, reject };
    });
    const turn = this.turn as unknown as Turn;
    const r = await this.api
      .POST("/api/v1/sessions/{id}/chat", {
        params: { path: { id: this.id } },
        body: { text, ...(images.length ? { images } : {}), clientMessageId },
      })
      .catch((err: unknown) => {
        this.turn = undefined;
        throw RequestError.internalError(undefined, `cannot reach the agentd daemon: ${(err as Error).message}`);
      });
    if (!r.data) {
      this.turn = undefined;
      throw RequestError.internalError(undefined, `agentd refused the message: ${errorText(r.error, r.response)}`);
    }
    if (r.data.status === "steered") turn.ours = true;
    turn.accepted = true;
    if (turn.cancelled) await this.abort().catch((err: unknown) => this.deps.log(`cancel: ${(err as Error).message}`));
    return done;
  }

  /**
   * A slash command typed as the prompt: its reply is shown; when it starts or steers a turn (`/goal`, `/steer`,
   * a message it passes on), that turn streams and the prompt ends with it.
   */
  async command(line: string): Promise<StopReason> {
    if (this.turn) throw RequestError.invalidRequest(undefined, "A prompt is already running in this session");
    // Adopted at once: the turn a command starts may stream (and end) before the command's answer arrives.
    const done = new Promise<StopReason>((resolve, reject) => {
      this.turn = { clientMessageId: "", ours: true, accepted: true, resolve, reject };
    });
    const turn = this.turn as unknown as Turn;
    const r = await this.api
      .POST("/api/v1/sessions/{id}/command", { params: { path: { id: this.id } }, body: { command: line } })
      .catch((err: unknown) => ({ data: undefined, error: { error: (err as Error).message }, response: undefined }));
    const text = r.data ? r.data.message || `${r.data.command}: done` : errorText(r.error, r.response);
    await this.notify({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${text}\n\n` } });
    const status = (r.data?.data as { status?: unknown } | undefined)?.status;
    if (status !== "started" && status !== "steered" && (this.turn as Turn | undefined) === turn) {
      this.turn = undefined;
      turn.resolve("end_turn");
    }
    return done;
  }

  async cancel(): Promise<void> {
    const turn = this.turn;
    if (!turn) return;
    turn.cancelled = true;
    if (turn.accepted) await this.abort();
  }

  private async abort(): Promise<void> {
    await ok(this.api.POST("/api/v1/sessions/{id}/abort", { params: { path: { id: this.id } } }));
  }

  async setMode(mode: string): Promise<void> {
    if (mode !== "plan" && mode !== "build") {
      throw RequestError.invalidParams(undefined, `Unknown mode "${mode}" (use "build" or "plan")`);
    }
    const r = await this.api.POST("/api/v1/sessions/{id}/mode", {
      params: { path: { id: this.id } },
      body: { mode },
    });
    if (!r.data) throw RequestError.invalidRequest(undefined, errorText(r.error, r.response));
    this.modeChanged(r.data.mode);
  }

  private modeChanged(mode: unknown): void {
    if ((mode !== "plan" && mode !== "build") || mode === this.mode) return;
    this.mode = mode;
    void this.notify({ sessionUpdate: "current_mode_update", currentModeId: mode });
  }

  private onEvent(ev: StreamEvent): void {
    const prev = this.state;
    const next = reduce(prev, ev);
    // A frame replayed after a reconnect was handled when it first came.
    if (next === prev) return;
    this.state = next;
    if (next.mode !== prev.mode) this.modeChanged(next.mode);
    this.decisions(prev, next);
    const turn = this.turn;
    switch (ev.type) {
      case "resync":
        void this.resynced();
        return;
      case "editor_fs_request":
        void serveEditorRequest(this, this.deps, ev);
        return;
      case "user_message": {
        const msg = ev.message as { clientMessageId?: string } | undefined;
        if (turn && msg?.clientMessageId === turn.clientMessageId) turn.ours = true;
        return;
      }
      case "usage": {
        const u = ev.usage as { promptTokens?: number; completionTokens?: number } | undefined;
        if (turn && u) {
          const used = (u.promptTokens ?? 0) + (u.completionTokens ?? 0);
          const size = typeof ev.contextWindow === "number" ? ev.contextWindow : this.deps.contextWindow;
          void this.notify({ sessionUpdate: "usage_update", used, size });
        }
        return;
      }
      case "end":
        if (turn?.ours) this.finish(turn, ev);
        return;
    }
    if (ev.type === "error" && turn && typeof ev.message === "string") turn.lastError = ev.message;
    if (!turn) return;
    for (const update of this.mapper.map(ev, next)) void this.notify(update);
  }

  private finish(turn: Turn, ev: StreamEvent): void {
    this.turn = undefined;
    const reason = stopReason(ev);
    // Answer after every update of the turn has gone out.
    void this.chain.then(() => {
      if (reason === "error") {
        turn.reject(RequestError.internalError(undefined, turn.lastError ?? "The turn failed"));
      } else turn.resolve(reason);
    });
  }

  /**
   * The decisions the session waits for, as the state says after an event: each new one is asked of the editor,
   * and one settled elsewhere (web UI, timeout, the turn's end) is withdrawn.
   */
  private decisions(prev: SessionState, next: SessionState): void {
    for (const c of next.confirmations) {
      if (prev.confirmations.some((p) => p.id === c.id)) continue;
      const ev = c as unknown as StreamEvent;
      this.decide(c.id, (signal) => confirmCommand(this, this.deps, ev, runningTools(next), signal));
    }
    for (const c of prev.confirmations) if (!next.confirmations.some((x) => x.id === c.id)) this.withdraw(c.id);
    const q = next.question;
    const id = q?.id;
    if (id && id !== prev.question?.id) {
      this.decide(id, (signal) => {
        this.openQuestion = id;
        return answerQuestion(this, this.deps, q, signal);
      });
    }
    if (!id && this.openQuestion) this.withdraw(this.openQuestion);
  }

  /** Each decision is asked once, even when a reconnect shows it again. */
  private decide(id: string, ask: (signal: AbortSignal) => Promise<void>): void {
    if (this.asked.has(id)) return;
    this.asked.add(id);
    const ac = new AbortController();
    this.open.set(id, ac);
    ask(ac.signal)
      .catch((err: unknown) => {
        if (!ac.signal.aborted) this.deps.log(`decision ${id}: ${(err as Error).message}`);
      })
      .finally(() => this.open.delete(id));
  }

  /** Settled elsewhere: the editor's dialog for it is cancelled ($/cancel_request). */
  private withdraw(id: string): void {
    this.open.get(id)?.abort();
    this.open.delete(id);
    if (this.openQuestion === id) this.openQuestion = undefined;
  }

  /** The stream could not be replayed after a reconnect: a prompt whose turn ended meanwhile is answered now. */
  private async resynced(): Promise<void> {
    const turn = this.turn;
    if (!turn) return;
    const r = await this.api.GET("/api/v1/sessions/{id}", { params: { path: { id: this.id }, query: { turns: 1 } } });
    if (this.turn === turn && r.data?.status !== "running") this.finish(turn, { type: "end", reason: "stop" });
  }
}
