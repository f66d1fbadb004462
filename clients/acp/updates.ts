/**
 * agentd session events as ACP `session/update` payloads. What the protocol needs across events (the arguments of
 * running tool calls, whose diffs and locations are sent again with the result, and the output a command has
 * streamed so far) is read from the session's state, folded by the shared reducer (clients/api/session-state.ts).
 */
import type { PlanEntry, SessionUpdate, StopReason, ToolCallContent } from "@agentclientprotocol/sdk";
import type { StreamEvent } from "../api/events.js";
import type { SessionState } from "../api/session-state.js";
import { parseArgs, textContent, toolDiff, toolKind, toolLocations, toolTitle } from "./tools.js";

/** Output of a running command kept for the editor (the tail). */
const MAX_LIVE_OUTPUT = 20_000;

export interface ToolSnapshot {
  id: string;
  name: string;
  args: unknown;
  status: "ok" | "error" | "running";
  result?: string;
}

export type AgentdMode = "build" | "plan";

export const MODES = [
  { id: "build", name: "Build", description: "Full toolset: edits files and runs commands" },
  { id: "plan", name: "Plan", description: "Read-only exploration; writes only the session's plan file" },
];

/** agentd's `end.reason` as an ACP stop reason (`error` is answered as a JSON-RPC error instead). */
export function stopReason(ev: StreamEvent): StopReason | "error" {
  switch (ev.reason) {
    case "aborted":
      return "cancelled";
    case "error":
      return "error";
    case "refused":
    case "refusal":
      return "refusal";
    default:
      // stop, disconnected (the provider's stream ended early: what was streamed is the answer)
      return ev.limit === "iterations" ? "max_turn_requests" : "end_turn";
  }
}

function planEntries(todos: unknown): PlanEntry[] {
  if (!Array.isArray(todos)) return [];
  return todos.flatMap((t) => {
    if (!t || typeof t !== "object") return [];
    const o = t as Record<string, unknown>;
    const content = typeof o.content === "string" ? o.content : "";
    if (!content) return [];
    // ACP has no "cancelled": a dropped item is no longer open work.
    const status =
      o.status === "in_progress"
        ? "in_progress"
        : o.status === "completed" || o.status === "cancelled"
          ? "completed"
          : "pending";
    const priority = o.priority === "high" || o.priority === "low" ? o.priority : "medium";
    return [{ content, status, priority }];
  });
}

/** The running tool calls (most recent last), e.g. to find the bash call a confirmation belongs to. */
export function runningTools(state: SessionState): Array<{ id: string; name: string; args: Record<string, unknown> }> {
  return state.running.flatMap((id) => {
    const t = state.tools[id];
    return t ? [{ id, name: t.name, args: parseArgs(t.args) }] : [];
  });
}

export class UpdateMapper {
  constructor(private readonly cwd: string) {}

  /**
   * The session/update payloads for one event of the turn (none for events the protocol has no place for);
   * `state` is the session's state with the event applied.
   */
  map(ev: StreamEvent, state?: SessionState): SessionUpdate[] {
    switch (ev.type) {
      case "token":
        return typeof ev.text === "string" && ev.text
          ? [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: ev.text } }]
          : [];
      case "thinking":
        return typeof ev.text === "string" && ev.text
          ? [{ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: ev.text } }]
          : [];
      case "tool_start":
        return [this.toolStart(String(ev.id), String(ev.name), ev.args)];
      case "tool_output":
        return this.toolOutput(String(ev.toolCallId), typeof ev.text === "string" ? ev.text : "", state);
      case "tool_end":
        return [this.toolEnd(ev, state)];
      case "todos_updated":
        return [{ sessionUpdate: "plan", entries: planEntries(ev.todos) }];
      case "notice":
      case "error":
        return typeof ev.message === "string"
          ? [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n\n> ${ev.message}\n\n` } }]
          : [];
      default:
        return [];
    }
  }

  toolStart(id: string, name: string, rawArgs: unknown): SessionUpdate {
    const args = parseArgs(rawArgs);
    return {
      sessionUpdate: "tool_call",
      toolCallId: id,
      title: toolTitle(name, args),
      kind: toolKind(name),
      status: "in_progress",
      locations: toolLocations(name, args, this.cwd),
      content: toolDiff(name, args, this.cwd),
      rawInput: args,
    };
  }

  private toolOutput(id: string, text: string, state: SessionState | undefined): SessionUpdate[] {
    const t = state?.tools[id];
    if (!t || !text || !state?.running.includes(id)) return [];
    const output = t.output.slice(-MAX_LIVE_OUTPUT);
    return [{ sessionUpdate: "tool_call_update", toolCallId: id, content: [textContent(output)] }];
  }

  private toolEnd(ev: StreamEvent, state: SessionState | undefined): SessionUpdate {
    const id = String(ev.id);
    const t = state?.tools[id];
    const result = (ev.result ?? {}) as { content?: unknown; error?: unknown };
    const text = typeof result.content === "string" ? result.content : "";
    const args = t ? parseArgs(t.args) : {};
    return this.finished(id, String(ev.name ?? t?.name ?? ""), args, ev.status === "error", text, ev.result);
  }

  finished(
    id: string,
    name: string,
    args: Record<string, unknown>,
    failed: boolean,
    text: string,
    rawOutput?: unknown,
  ): SessionUpdate {
    const content: ToolCallContent[] = [];
    if (!failed) content.push(...toolDiff(name, args, this.cwd));
    if (text) content.push(textContent(text));
    return {
      sessionUpdate: "tool_call_update",
      toolCallId: id,
      status: failed ? "failed" : "completed",
      content,
      ...(rawOutput !== undefined ? { rawOutput } : {}),
    };
  }

  /** A tool call of the stored history, as one finished `tool_call` (session/load). */
  replayTool(call: ToolSnapshot): SessionUpdate {
    const args = parseArgs(call.args);
    const failed = call.status === "error";
    const done = this.finished(call.id, call.name, args, failed, call.result ?? "");
    return {
      sessionUpdate: "tool_call",
      toolCallId: call.id,
      title: toolTitle(call.name, args),
      kind: toolKind(call.name),
      status: call.status === "running" ? "in_progress" : failed ? "failed" : "completed",
      locations: toolLocations(call.name, args, this.cwd),
      content: done.sessionUpdate === "tool_call_update" ? (done.content ?? []) : [],
      rawInput: args,
    };
  }
}
