import type { SlashCommand } from "../../../core/index.js";
import { assertIdle, type CommandEnv, type Reply, requireSession, usage, words } from "../env.js";

export function undoCommand(env: CommandEnv): SlashCommand {
  return {
    name: "undo",
    description:
      "Restore files from the last turn's checkpoint and drop that turn's messages (--force: also delete files it created)",
    takesArgs: true,
    blocking: true,
    run: async (inv): Promise<Reply> => {
      const rec = await requireSession(env, inv);
      const flags = words(inv.args);
      if (flags.some((f) => f !== "--force" && f !== "-f")) throw usage("/undo [--force]");
      assertIdle(env, rec.id);
      const out = await env.checkpoints.undo(rec.id, rec.cwd, flags.length > 0);
      if (!out) return { message: "Nothing to undo", undone: false };
      await env.store().truncateMessages(rec.id, out.seq);
      const after = await env.sessions().update(rec.id, {});
      const removed = out.filesRestored ? out.created : [];
      env.sessions().publish(rec.id, {
        type: "undo",
        fromSeq: out.seq,
        filesRestored: out.filesRestored,
        restored: [...out.modified, ...out.deleted],
        removed,
      });
      const files = out.filesRestored
        ? `restored ${out.modified.length + out.deleted.length} file(s), removed ${removed.length}`
        : (out.note ?? "no files had changed");
      return {
        message: `Undid the last turn: ${files}`,
        undone: true,
        fromSeq: out.seq,
        filesRestored: out.filesRestored,
        restored: [...out.modified, ...out.deleted],
        removed,
        messageCount: after.messageCount,
      };
    },
  };
}
