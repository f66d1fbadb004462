/**
 * `session/load`: the stored conversation replayed as `session/update` notifications before the load is answered,
 * as the protocol asks, followed by the session's plan when it has one.
 */
import type { Schemas } from "../api/client.js";
import type { AcpSession } from "./session.js";
import { UpdateMapper } from "./updates.js";

export async function replayHistory(s: AcpSession, session: Schemas["Session"]): Promise<void> {
  const mapper = new UpdateMapper(session.cwd);
  for (const m of session.messages) {
    if (m.role === "user") {
      if (m.content)
        await s.notify({ sessionUpdate: "user_message_chunk", content: { type: "text", text: m.content } });
      continue;
    }
    if (m.role !== "assistant") {
      if (m.content) {
        await s.notify({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `> ${m.content}\n\n` } });
      }
      continue;
    }
    if (m.thinking)
      await s.notify({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: m.thinking } });
    if (m.content) await s.notify({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: m.content } });
    for (const call of m.toolCalls ?? []) await s.notify(mapper.replayTool(call));
  }
  const todos = (session as { todos?: unknown }).todos;
  if (Array.isArray(todos) && todos.length) {
    for (const update of mapper.map({ type: "todos_updated", todos })) await s.notify(update);
  }
}
