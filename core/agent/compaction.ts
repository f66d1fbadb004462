import type { Provider } from "../contributions.js";
import { errorMessage } from "../errors.js";
import type { SessionEvent } from "../events.js";
import type { SessionRecord, StoredMessage } from "../session-types.js";
import type { AgentDeps } from "./types.js";

/** Share of the in-context messages that is summarised (the most recent turns stay verbatim). */
const COMPACT_SHARE = 0.6;
const MAX_TRANSCRIPT_CHARS = 200_000;

function transcript(rows: StoredMessage[]): string {
  const lines: string[] = [];
  for (const r of rows) {
    const text =
      typeof r.content === "string"
        ? r.content
        : Array.isArray(r.content)
          ? r.content.map((p) => (p.type === "text" ? p.text : "[image]")).join(" ")
          : "";
    const calls = r.toolCalls?.map((c) => `${c.name}(${c.arguments.slice(0, 300)})`).join(", ");
    lines.push(
      `${r.role}${r.toolName ? ` ${r.toolName}` : ""}: ${text.slice(0, 4000)}${calls ? ` [calls: ${calls}]` : ""}`,
    );
  }
  const all = lines.join("\n");
  return all.length > MAX_TRANSCRIPT_CHARS ? all.slice(all.length - MAX_TRANSCRIPT_CHARS) : all;
}

/**
 * Summarises the older part of the context through the provider. The originals stay in the store (out of
 * context); the summary rides in the system prompt. Returns false when there was nothing to compact or it failed.
 */
export async function compactIfNeeded(opts: {
  deps: Pick<AgentDeps, "sessions">;
  rec: SessionRecord;
  provider: Provider;
  signal: AbortSignal;
  emit: (e: SessionEvent) => void;
  tokensBefore: number;
}): Promise<boolean> {
  const { deps, rec, provider, signal, emit } = opts;
  const rows = await deps.sessions.context(rec.id);
  // Cut at a user message so a tool call is never separated from its result.
  // The user message nearest to (preferably at or before) the target share; the current turn always stays.
  const target = Math.floor(rows.length * COMPACT_SHARE);
  const starts = rows.flatMap((r, i) => (i > 0 && r.role === "user" ? [i] : []));
  const cut = starts.filter((i) => i <= target).at(-1) ?? starts[0];
  if (cut === undefined) return false;
  const older = rows.slice(0, cut);
  const previous = rec.meta.compactionSummary;
  let summary = "";
  try {
    for await (const d of provider.stream(
      {
        model: rec.model,
        messages: [
          {
            role: "system",
            content:
              "You summarise a coding-agent conversation so the agent can continue without it. Keep: the user's goals and constraints, decisions made, files touched and their state, commands and results that matter, open problems and next steps. Be concise and factual.",
          },
          {
            role: "user",
            content: `${previous ? `Earlier summary:\n${previous}\n\n` : ""}Conversation to summarise:\n${transcript(older)}`,
          },
        ],
      },
      signal,
    )) {
      if (d.type === "content") summary += d.text;
    }
  } catch (err) {
    if (!signal.aborted) emit({ type: "compaction_failed", reason: errorMessage(err) });
    return false;
  }
  if (!summary.trim()) {
    emit({ type: "compaction_failed", reason: "the provider returned an empty summary" });
    return false;
  }
  const last = older.at(-1) as StoredMessage;
  await deps.sessions.markOutOfContext(rec.id, last.seq);
  await deps.sessions.appendMessage(rec.id, {
    role: "system",
    content: `[Compacted context] ${summary.trim()}`,
    inContext: false,
  });
  await deps.sessions.setMeta(rec.id, { compactionSummary: summary.trim() });
  emit({ type: "compaction", messagesCompacted: older.length, tokensBefore: opts.tokensBefore, uptoSeq: last.seq });
  return true;
}
