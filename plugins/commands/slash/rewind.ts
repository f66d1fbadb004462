import { MAX_SEQ, type SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, requireSession, usage, words } from "../env.js";
import { RESTORE_MODES, type RestoreMode, rewind } from "../rewind.js";
import { fileSummary } from "./session-support.js";

const MAX_REWIND_CHOICES = 50;

export function rewindCommand(env: CommandEnv): SlashCommand {
  return {
    name: "rewind",
    description:
      "Go back to a user message: /rewind <seq> [both|code|conversation]; without a seq, lists the messages to pick",
    takesArgs: true,
    blocking: true,
    run: async (inv): Promise<Reply> => {
      const rec = await requireSession(env, inv);
      const [seqArg, mode = "both", ...extra] = words(inv.args);
      if (!seqArg) {
        const page = await env.sessions().history(rec.id, MAX_SEQ, MAX_REWIND_CHOICES);
        const choices = page.messages
          .filter((m) => m.role === "user" && typeof m.seq === "number")
          .map((m) => ({ seq: m.seq as number, text: (m.content ?? "").slice(0, 200) }));
        return { message: choices.length ? "Pick a message to rewind to" : "No messages to rewind to", choices };
      }
      if (!/^\d+$/.test(seqArg) || extra.length || !(RESTORE_MODES as readonly string[]).includes(mode)) {
        throw usage("/rewind [<message seq> [both|code|conversation]]");
      }
      const out = await rewind(env, rec, Number(seqArg), mode as RestoreMode);
      return { message: `Rewound to message ${seqArg} (${mode}): ${fileSummary(out)}`, ...out };
    },
  };
}
