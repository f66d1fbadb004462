/**
 * agentd session events as ACP `session/update` payloads. Stateful only for what the protocol needs across events:
 * the arguments of running tool calls (their diffs and locations are sent again with the result) and the output a
 * command has streamed so far.
 */
import type { PlanEntry, SessionUpdate, StopReason, ToolCallContent } from "@agentclientprotocol/sdk";
import type { StreamEvent } from "../api/events.js";
import { parseArgs, textContent, toolDiff, toolKind, toolLocations, toolTitle } from "./tools.js";

/** Output of a running command kept for the editor (the tail). */
const MAX_LIVE_OUTPUT = 20_000;

interface RunningTool {
  name: string;
  args: Record<string, unknown>;
  output: string;
}

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

export class UpdateMapper {
  private readonly running = new Map<string, RunningTool>();

  constructor(private readonly cwd: string) {}

  /** The session/update payloads for one event of the turn (none for events the protocol has no place for). */
  map(ev: StreamEvent): SessionUpdate[] {
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
        return this.toolOutput(String(ev.toolCallId), typeof ev.text === "string" ? ev.text : "");
      case "tool_end":
        return [this.toolEnd(ev)];
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
    this.running.set(id, { name, args, output: "" });
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

  /** The running tool calls (most recent last), e.g. to find the bash call a confirmation belongs to. */
  runningTools(): Array<{ id: string; name: string; args: Record<string, unknown> }> {
    return [...this.running].map(([id, t]) => ({ id, name: t.name, args: t.args }));
  }

  private toolOutput(id: string, text: string): SessionUpdate[] {
    const t = this.running.get(id);
    if (!t || !text) return [];
    t.output = (t.output + text).slice(-MAX_LIVE_OUTPUT);
    return [{ sessionUpdate: "tool_call_update", toolCallId: id, content: [textContent(t.output)] }];
  }

  private toolEnd(ev: StreamEvent): SessionUpdate {
    const id = String(ev.id);
    const t = this.running.get(id);
    this.running.delete(id);
    const result = (ev.result ?? {}) as { content?: unknown; error?: unknown };
    const text = typeof result.content === "string" ? result.content : "";
    return this.finished(id, String(ev.name ?? t?.name ?? ""), t?.args ?? {}, ev.status === "error", text, ev.result);
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
