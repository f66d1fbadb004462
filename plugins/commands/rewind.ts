import {
  ApiError,
  DEFAULT_HISTORY_TURNS,
  isApiError,
  MAX_SEQ,
  type NewMessage,
  type SessionRecord,
  type StoredMessage,
} from "../../core/index.js";
import type { Entry, FileChanges, RedoState } from "./checkpoints.js";
import { assertIdle, type CommandEnv } from "./env.js";

export const RESTORE_MODES = ["both", "code", "conversation"] as const;
export type RestoreMode = (typeof RESTORE_MODES)[number];

export interface RewindOutcome {
  /** What was done: a rewind, or the redo of one. */
  action: "rewind" | "redo";
  fromSeq: number;
  restore: RestoreMode;
  filesRestored: boolean;
  /** Files written back (modified or deleted since). */
  restored: string[];
  /** Files removed (created since). */
  removed: string[];
  messageCount: number;
}

const PAGE = 500;

/** The stored messages from `seq` on, in order. */
async function messagesFrom(env: CommandEnv, id: string, seq: number): Promise<StoredMessage[]> {
  const store = env.store();
  if (!store.readMessages) {
    const page = await store.historyPage(id, MAX_SEQ);
    return page.messages.filter((m) => m.seq >= seq);
  }
  const out: StoredMessage[] = [];
  for (let after = seq - 1; ; ) {
    const rows = await store.readMessages(id, after, PAGE);
    out.push(...rows);
    if (rows.length < PAGE) return out;
    after = (rows.at(-1) as StoredMessage).seq;
  }
}

/** The user message `seq`: 404 when there is none, 400 when the message is not the user's. */
async function userMessage(env: CommandEnv, id: string, seq: number): Promise<StoredMessage> {
  const store = env.store();
  const rows = store.readMessages
    ? await store.readMessages(id, seq - 1, 1)
    : (await store.historyPage(id, MAX_SEQ)).messages.filter((m) => m.seq === seq);
  const msg = rows[0];
  if (!msg || msg.seq !== seq) throw ApiError.notFound(`No message ${seq} in this session`);
  if (msg.role !== "user" || msg.meta?.reminder) {
    throw ApiError.badRequest(`Message ${seq} is not a user message: rewind goes back to one of the user's messages`);
  }
  return msg;
}

/** The snapshot a code rewind to `seq` restores (undefined: no file changed since); 400/409 when there is none. */
function checkpointOf(env: CommandEnv, id: string, seq: number): string | undefined {
  const cp = env.checkpoints.checkpointFor(id, seq);
  if (!cp.startsTurn) {
    throw ApiError.badRequest(
      `Message ${seq} did not start a turn (it joined a running one): rewind to the message that started it`,
    );
  }
  return cp.commit;
}

/** Which files a code rewind to `seq` would change, or why it cannot be done. */
export async function previewRewind(
  env: CommandEnv,
  rec: SessionRecord,
  seq: number,
): Promise<{ messageSeq: number; available: boolean; reason?: string } & FileChanges> {
  await userMessage(env, rec.id, seq);
  const none = { created: [], modified: [], deleted: [] };
  try {
    const commit = checkpointOf(env, rec.id, seq);
    const files = commit ? await env.checkpoints.changesTo(rec.id, rec.cwd, commit) : none;
    return { messageSeq: seq, available: true, ...files };
  } catch (err) {
    if (isApiError(err) && err.status !== 404) {
      return { messageSeq: seq, available: false, reason: err.message, ...none };
    }
    throw err;
  }
}

/**
 * Rewinds the session to the user message `seq`: `code` restores the files as they were before the turn it
 * started, `conversation` drops it and every later message, `both` does both. A fresh checkpoint of the files and
 * the dropped messages are kept for one `/redo`. Refused (409) while a turn runs; nothing changes when it fails.
 */
export async function rewind(
  env: CommandEnv,
  rec: SessionRecord,
  seq: number,
  restore: RestoreMode,
): Promise<RewindOutcome> {
  assertIdle(env, rec.id);
  await userMessage(env, rec.id, seq);
  const code = restore !== "conversation";
  const conversation = restore !== "code";
  const target = code ? checkpointOf(env, rec.id, seq) : undefined;
  const redo: RedoState = { restore, fromSeq: seq };
  if (target) redo.commit = await env.checkpoints.capture(rec.id, rec.cwd, `before rewinding to message ${seq}`);
  const dropped = conversation ? await messagesFrom(env, rec.id, seq) : [];
  const files = target ? await env.checkpoints.restoreFiles(rec.id, rec.cwd, target) : undefined;
  if (conversation) {
    await env.store().truncateMessages(rec.id, seq);
    redo.messages = dropped;
    redo.entries = env.checkpoints.dropFrom(rec.id, seq);
  }
  await env.checkpoints.setRedo(rec.id, redo);
  return announce(env, rec.id, "rewind", seq, restore, files);
}

/** Undoes the last rewind: the files as they were before it and the messages it dropped. */
export async function redo(env: CommandEnv, rec: SessionRecord): Promise<RewindOutcome | undefined> {
  assertIdle(env, rec.id);
  const r = env.checkpoints.redo(rec.id);
  if (!r) return undefined;
  const files = r.commit ? await env.checkpoints.restoreFiles(rec.id, rec.cwd, r.commit) : undefined;
  if (r.messages?.length) {
    const seqs = new Map<number, number>();
    for (const m of r.messages as StoredMessage[]) {
      const { seq, ...rest } = m;
      const saved = await env.store().appendMessage(rec.id, rest as NewMessage);
      seqs.set(seq, saved.seq);
    }
    const entries = (r.entries ?? []).map((e): Entry => ({ ...e, seq: seqs.get(e.seq) ?? e.seq }));
    await env.checkpoints.restoreEntries(rec.id, entries);
  }
  await env.checkpoints.setRedo(rec.id, undefined);
  return announce(env, rec.id, "redo", r.fromSeq, r.restore, files);
}

/** Publishes what clients need to redraw (the recent history, then the new summary) and describes the outcome. */
async function announce(
  env: CommandEnv,
  id: string,
  action: RewindOutcome["action"],
  fromSeq: number,
  restore: RestoreMode,
  files: FileChanges | undefined,
): Promise<RewindOutcome> {
  const page = await env.sessions().history(id, MAX_SEQ, DEFAULT_HISTORY_TURNS);
  const out: RewindOutcome = {
    action,
    fromSeq,
    restore,
    filesRestored: files !== undefined,
    restored: files ? [...files.modified, ...files.deleted] : [],
    removed: files?.created ?? [],
    messageCount: 0,
  };
  env.sessions().publish(id, {
    type: action,
    fromSeq,
    restore,
    filesRestored: out.filesRestored,
    restored: out.restored,
    removed: out.removed,
    messages: page.messages,
    oldestSeq: page.oldestSeq,
    hasMoreHistory: page.hasMoreHistory,
  });
  out.messageCount = (await env.sessions().update(id, {})).messageCount;
  return out;
}
