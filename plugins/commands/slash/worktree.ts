import { ApiError, type SlashCommand } from "../../../core/index.js";
import { assertIdle, type CommandEnv, type Reply, requireSession, usage, words } from "../env.js";
import { listWorktrees } from "../git.js";

const WORKTREE_USAGE = "/worktree [list | new [branch] | merge | discard]";

export function worktreeCommand(env: CommandEnv): SlashCommand {
  return {
    name: "worktree",
    description: "List the repository's worktrees, or move the session into a new one, merge it or discard it",
    takesArgs: true,
    run: async (inv): Promise<Reply> => {
      const rec = await requireSession(env, inv);
      const [sub = "list", ...rest] = words(inv.args);
      const service = env.worktrees();
      if (sub === "list") {
        const worktrees = await listWorktrees(rec.cwd);
        const own = service?.info(rec.id);
        return {
          message: worktrees.length ? `${worktrees.length} worktree(s)` : "Not a git repository",
          worktrees,
          ...(own ? { session: own } : {}),
        };
      }
      if (!service) throw ApiError.badRequest("Worktrees are not available in this daemon");
      if (sub === "new") {
        if (rest.length > 1) throw usage("/worktree new [branch]");
        const wt = await service.moveToNew(rec.id, rest[0] ? { branch: rest[0] } : {});
        return { message: `Working in ${wt.path} on ${wt.branch}`, worktree: wt };
      }
      if (rest.length) throw usage(WORKTREE_USAGE);
      assertIdle(env, rec.id);
      if (sub === "merge") {
        const out = await service.merge(rec.id);
        const wt = service.info(rec.id);
        const how = out.fastForward ? "fast-forward" : "merge commit";
        return {
          message: out.merged ? `Merged into ${wt?.base} (${how}, ${out.files.length} file(s))` : "Nothing to merge",
          ...out,
        };
      }
      if (sub === "discard") {
        const out = await service.discard(rec.id);
        return { message: `Worktree removed; back in ${out.cwd}`, ...out };
      }
      throw usage(WORKTREE_USAGE);
    },
  };
}
