import { execFileSync } from "node:child_process";
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Runs git in `cwd` with a fixed identity (tests never depend on the machine's git config). */
export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    encoding: "utf8",
  });
}

/** A temporary repository on branch main with `files` committed. */
export function makeRepo(files: Record<string, string>, prefix = "agentd-repo-"): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  gitIn(dir, "init", "-q", "-b", "main");
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  gitIn(dir, "add", "-A");
  gitIn(dir, "commit", "-q", "-m", "init");
  return dir;
}

/** What a failure must leave as it was: the status, the worktrees, the branches and HEAD. */
export function repoState(dir: string): string {
  return [
    gitIn(dir, "status", "--porcelain", "--untracked-files=all"),
    gitIn(dir, "worktree", "list", "--porcelain"),
    gitIn(dir, "branch", "--list", "-v", "--no-abbrev"),
    gitIn(dir, "rev-parse", "HEAD"),
  ].join("\n--\n");
}
