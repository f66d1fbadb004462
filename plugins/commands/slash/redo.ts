import type { SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, requireSession } from "../env.js";
import { redo } from "../rewind.js";
import { fileSummary } from "./session-support.js";

export function redoCommand(env: CommandEnv): SlashCommand {
  return {
    name: "redo",
    description: "Undo the last rewind: its files and messages come back",
    blocking: true,
    run: async (inv): Promise<Reply> => {
      const out = await redo(env, await requireSession(env, inv));
      if (!out) return { message: "Nothing to redo", redone: false };
      return { message: `Rewind undone: ${fileSummary(out)}`, redone: true, ...out };
    },
  };
}
