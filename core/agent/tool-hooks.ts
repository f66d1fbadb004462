import type { ToolResult } from "../contributions.js";
import type { BusEvents, EventBus, ToolHookVerdict } from "../events.js";
import type { Logger } from "../logger.js";
import { toolError } from "../tools.js";
import type { DispatchHooks } from "./dispatch.js";

type Verdicts = Array<ToolHookVerdict | undefined | void>;

async function collect<K extends "tool.before" | "tool.after">(
  bus: EventBus,
  log: Logger,
  type: K,
  payload: Omit<BusEvents[K], "waitUntil" | "type">,
): Promise<Verdicts> {
  const waits: Array<Promise<ToolHookVerdict | undefined | void>> = [];
  const waitUntil = (p: Promise<ToolHookVerdict | undefined | void>) => {
    waits.push(p);
  };
  bus.emit({ ...payload, type, waitUntil } as unknown as BusEvents[K]);
  if (!waits.length) return [];
  const settled = await Promise.allSettled(waits);
  return settled.map((s) => {
    if (s.status === "fulfilled") return s.value;
    log.error({ err: s.reason, event: type }, "tool hook failed");
    return undefined;
  });
}

/**
 * The `before`/`after` dispatch hooks of one turn, backed by the bus events `tool.before` and `tool.after`, so
 * plugins (project hooks, policies) can veto calls or add feedback without the loop knowing them.
 */
export function busToolHooks(
  bus: EventBus,
  log: Logger,
  base: { sessionId: string; cwd: string; signal: AbortSignal },
): Pick<DispatchHooks, "before" | "after"> {
  const payload = (call: { id: string; name: string }, args: Record<string, unknown>) => ({
    ...base,
    toolCallId: call.id,
    tool: call.name,
    args,
  });
  return {
    async before(call, args) {
      const verdicts = await collect(bus, log, "tool.before", payload(call, args));
      const reasons = verdicts.flatMap((v) => (v?.block ? [v.block] : []));
      if (!reasons.length) return undefined;
      return toolError(
        "permission_denied",
        `${call.name} was blocked by a hook: ${reasons.join("; ")}`,
        "Do not retry the same call; follow the reason given, change the approach or ask the user.",
      );
    },
    async after(call, args, result): Promise<ToolResult> {
      const verdicts = await collect(bus, log, "tool.after", { ...payload(call, args), result });
      const notes = verdicts.flatMap((v) => [v?.block, v?.feedback].filter((x): x is string => !!x));
      if (!notes.length) return result;
      return { ...result, content: `${result.content}\n\n[hook feedback]\n${notes.join("\n")}` };
    },
  };
}
