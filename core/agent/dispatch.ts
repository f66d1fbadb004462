import type { ToolContext, ToolDefinition, ToolResult } from "../contributions.js";
import { errorMessage } from "../errors.js";
import { abortedResult, checkToolArguments, toolError } from "../tools.js";

export interface PendingCall {
  id: string;
  name: string;
  /** Raw JSON arguments from the model. */
  arguments: string;
}

export interface DispatchHooks {
  lookup(name: string): ToolDefinition | undefined;
  /** Names offered to the model (for the unknown-tool message). */
  available(): string[];
  context(call: PendingCall): ToolContext;
  onStart(call: PendingCall): void;
  /** Called as each call finishes (in completion order). */
  onEnd(call: PendingCall, result: ToolResult): void;
  signal: AbortSignal;
  /** Runs before a validated call executes; a returned result replaces the execution (a veto). Must not throw. */
  before?(call: PendingCall, args: Record<string, unknown>): Promise<ToolResult | undefined>;
  /** Runs after a call executed; returns the result to record (possibly with feedback added). Must not throw. */
  after?(call: PendingCall, args: Record<string, unknown>, result: ToolResult): Promise<ToolResult>;
}

const ABORTED = abortedResult;

/** Parses, validates and runs one call; never throws. */
async function runOne(call: PendingCall, hooks: DispatchHooks): Promise<ToolResult> {
  const tool = hooks.lookup(call.name);
  if (!tool) {
    return toolError(
      "unknown_tool",
      `Unknown tool "${call.name}".`,
      `Use one of the available tools: ${hooks.available().join(", ")}.`,
    );
  }
  let args: unknown;
  try {
    args = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
  } catch (err) {
    return toolError(
      "invalid_arguments",
      `The arguments of ${call.name} are not valid JSON: ${errorMessage(err)}`,
      "Send the arguments as one JSON object matching the tool's schema.",
      true,
    );
  }
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    return toolError(
      "invalid_arguments",
      `The arguments of ${call.name} must be a JSON object.`,
      "Send a JSON object.",
      true,
    );
  }
  const invalid = checkToolArguments(tool, args);
  if (invalid) return invalid;
  const valid = args as Record<string, unknown>;
  const veto = hooks.before ? await hooks.before(call, valid) : undefined;
  if (veto) return veto;
  if (hooks.signal.aborted) return ABORTED();
  let result: ToolResult;
  try {
    result = await tool.execute(valid, hooks.context(call));
  } catch (err) {
    if (hooks.signal.aborted) return ABORTED();
    result = toolError(
      "execution_failed",
      `${call.name} failed: ${errorMessage(err)}`,
      "Check the arguments or try another approach.",
      false,
    );
  }
  return hooks.after && !hooks.signal.aborted ? hooks.after(call, valid, result) : result;
}

/**
 * Runs the tool calls of one assistant message: consecutive read-only calls run concurrently, every other call
 * runs alone in call order (so a write is never reordered around the reads next to it). Each call reports its
 * end as soon as it finishes. Resolves with the results in call order.
 */
export async function dispatchToolCalls(calls: PendingCall[], hooks: DispatchHooks): Promise<ToolResult[]> {
  const results: ToolResult[] = new Array(calls.length);
  const run = async (i: number) => {
    const call = calls[i] as PendingCall;
    if (hooks.signal.aborted) {
      results[i] = ABORTED();
    } else {
      hooks.onStart(call);
      results[i] = await runOne(call, hooks);
    }
    hooks.onEnd(call, results[i] as ToolResult);
  };
  let i = 0;
  while (i < calls.length) {
    const readOnly = (k: number) => hooks.lookup((calls[k] as PendingCall).name)?.readOnly === true;
    if (readOnly(i)) {
      const group: number[] = [];
      while (i < calls.length && readOnly(i)) group.push(i++);
      await Promise.all(group.map(run));
    } else {
      await run(i++);
    }
  }
  return results;
}

/** What the model reads for a result: the content, plus the structured error when the call failed. */
export function resultForModel(r: ToolResult): string {
  if (!r.isError || !r.error) return r.content;
  return `${r.content}\n[error code: ${r.error.code}; retryable: ${r.error.retryable}; suggested fix: ${r.error.suggestedFix}]`;
}
