import type { Question, ToolContext, ToolDefinition, ToolResult } from "../contributions.js";
import type { SessionEvent, SessionEventOf } from "../events.js";
import type { SessionRecord, StoredMessage } from "../session-types.js";
import { abortedResult } from "../tools.js";
import { dispatchToolCalls, type PendingCall, resultForModel } from "./dispatch.js";
import type { EditorFsBroker } from "./editor-fs.js";
import type { SessionInteractions } from "./interaction.js";
import { plansDirOf } from "./prompt.js";
import { busToolHooks } from "./tool-hooks.js";
import type { ActiveTurn } from "./turn-queue.js";
import type { AgentDeps } from "./types.js";

/** Whether a session is offered a tool: its mode allows it, and it is not another session's own tool. */
export function offered(tool: ToolDefinition, rec: SessionRecord): boolean {
  return (!tool.modes || tool.modes.includes(rec.mode)) && (!tool.sessionId || tool.sessionId === rec.id);
}

/** How long running tools get to settle after an abort before they are recorded as aborted. */
const ABORT_GRACE_MS = 2000;

export interface ToolRun {
  id: string;
  name: string;
  result: ToolResult;
}

/**
 * Tool execution and recording: runs one model call's tool calls (through the bus hooks and the dispatcher), stores
 * each result as a `tool` message the moment it is known and announces it as `tool_end`, exactly once per call.
 * After an abort the tools get a grace period; whatever still runs is then recorded as aborted. Tools that may have
 * changed files end with one `fs_change`.
 */
export async function runTools(
  deps: AgentDeps,
  t: ActiveTurn,
  rec: SessionRecord,
  calls: PendingCall[],
  interactions: SessionInteractions,
  editors: EditorFsBroker,
  emit: (e: SessionEvent) => void,
): Promise<ToolRun[]> {
  const signal = t.ac.signal;
  const byName = new Map<string, ToolDefinition>();
  for (const tool of deps.tools(rec)) if (offered(tool, rec)) byName.set(tool.name, tool);
  const permissionMode = rec.meta.permissionMode === "bypass" ? "bypass" : "default";
  const recorded = new Map<string, ToolResult>();
  // Results are stored in the order they arrive; each is announced once stored. All are stored before returning.
  const writes: Promise<void>[] = [];
  const record = (call: PendingCall, result: ToolResult) => {
    if (recorded.has(call.id) || t.finished) return;
    recorded.set(call.id, result);
    writes.push(
      store(call, result).catch((err) => {
        deps.log.error({ err, sessionId: rec.id, tool: call.name }, "could not store a tool result");
      }),
    );
  };
  const store = async (call: PendingCall, result: ToolResult) => {
    const content: StoredMessage["content"] = result.images?.length
      ? [
          { type: "text", text: resultForModel(result) },
          ...result.images.map((i) => ({ type: "image_url" as const, image_url: { url: i.dataUrl } })),
        ]
      : resultForModel(result);
    const stored = await deps.sessions.appendMessage(rec.id, {
      role: "tool",
      toolCallId: call.id,
      toolName: call.name,
      content,
      meta: {
        isError: result.isError === true,
        error: result.error,
        ...(result.meta ? { toolMeta: result.meta } : {}),
      },
    });
    const wire: SessionEventOf<"tool_end">["result"] = { content: result.content };
    if (result.isError) wire.isError = true;
    if (result.error) wire.error = result.error;
    if (result.images?.length) wire.imageCount = result.images.length;
    emit({ type: "tool_end", id: call.id, name: call.name, status: result.isError ? "error" : "ok", result: wire });
    deps.bus.emit({
      type: "message.appended",
      sessionId: rec.id,
      message: { role: "tool", seq: stored.seq, toolCallId: call.id, toolName: call.name },
      opensTurn: false,
    });
  };
  const context = (call: PendingCall): ToolContext => ({
    sessionId: rec.id,
    cwd: rec.cwd,
    toolCallId: call.id,
    mode: rec.mode,
    plansDir: plansDirOf(rec),
    permissionMode,
    signal,
    // Tools emit their own progress events (tool_output, subagent_progress); the schema test checks them on the wire.
    emit: (e) => emit({ ...e, toolCallId: call.id } as SessionEvent),
    // bypass answers yes for the tool, except where only the user may answer: a command that cannot be confined
    // ("not sandboxed") and one a rule says to always ask about.
    confirm: (req) =>
      permissionMode === "bypass" && !req.reasons?.some((r) => r === "not sandboxed" || r === "rule")
        ? Promise.resolve(true)
        : interactions.confirm(req, signal),
    ask: (questions: Question[]) => interactions.ask(questions, signal),
    editor: editors.forTool(rec.id, signal),
    isHidden: (abs) => deps.isHidden?.(abs, rec.cwd) === true,
  });
  const dispatched = dispatchToolCalls(calls, {
    lookup: (name) => byName.get(name),
    available: () => [...byName.keys()],
    context,
    signal,
    onStart: (call) =>
      emit({ type: "tool_start", id: call.id, name: call.name, args: call.arguments || "{}", status: "running" }),
    onEnd: record,
    ...busToolHooks(deps.bus, deps.log, { sessionId: rec.id, cwd: rec.cwd, signal }),
  });
  if (!signal.aborted) {
    let onAbort = () => {};
    const aborted = new Promise<void>((resolve) => (onAbort = resolve));
    signal.addEventListener("abort", onAbort, { once: true });
    await Promise.race([dispatched, aborted]);
    signal.removeEventListener("abort", onAbort);
  }
  if (signal.aborted) {
    // Tools get a grace period to stop; whatever is still running is recorded as aborted.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([dispatched, new Promise<void>((r) => (timer = setTimeout(r, ABORT_GRACE_MS)))]);
    clearTimeout(timer);
    for (const call of calls) {
      if (!recorded.has(call.id)) record(call, abortedResult());
    }
  }
  await Promise.all(writes);
  // Clients refresh file views after tools that may have changed files (cast's `fs_change`).
  if (calls.some((c) => byName.get(c.name)?.readOnly !== true)) emit({ type: "fs_change" });
  return calls.map((c) => ({ id: c.id, name: c.name, result: recorded.get(c.id) as ToolResult }));
}
