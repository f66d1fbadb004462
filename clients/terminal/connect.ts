/**
 * Attaching a terminal client: the home's daemon (started in the background when none runs) and the session to
 * talk to: a given id, the most recent session of the directory (`--continue`), or a new one.
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { ok, type Schemas } from "../api/client.js";
import { attachDaemon, type DaemonConnection } from "../api/daemon.js";

export interface SessionChoice {
  home?: string;
  session?: string;
  continue?: boolean;
  cwd?: string;
  persona?: string;
  model?: string;
  /** `--worktree [branch]`: a new session in a new git worktree of the directory's repository. */
  worktree?: boolean | string;
}

/**
 * `--worktree [branch]` takes the next word as its branch; a quoted prompt (it has spaces, which no branch has) is
 * the prompt after all: `agentd --worktree "fix the login bug"`.
 */
export function promptAfterWorktree(words: string[], choice: SessionChoice): string[] {
  if (typeof choice.worktree !== "string" || !/\s/.test(choice.worktree)) return words;
  const prompt = choice.worktree;
  choice.worktree = true;
  return [prompt, ...words];
}

export function resolveCwd(dir?: string): string {
  const abs = resolve(dir ?? process.cwd());
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}

export async function connect(home?: string): Promise<DaemonConnection> {
  return attachDaemon({ home });
}

/** The session id to use (created when needed) and whether it was created now. */
export async function openSession(
  conn: DaemonConnection,
  choice: SessionChoice,
): Promise<{ id: string; created: boolean }> {
  if (choice.worktree && (choice.session || choice.continue)) {
    throw new Error("--worktree starts a new session: it cannot be combined with --session or --continue");
  }
  if (choice.session) {
    await ok(conn.api.GET("/api/v1/sessions/{id}", { params: { path: { id: choice.session }, query: { turns: 1 } } }));
    return { id: choice.session, created: false };
  }
  const cwd = resolveCwd(choice.cwd);
  if (choice.continue) {
    const list = (await ok(conn.api.GET("/api/v1/sessions"))) as Schemas["SessionSummary"][];
    const mine = list.filter((s) => s.cwd === cwd).sort((a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt))[0];
    if (mine) return { id: mine.id, created: false };
  }
  const res = await ok(
    conn.api.POST("/api/v1/sessions", {
      body: {
        cwd,
        ...(choice.persona ? { persona: choice.persona } : {}),
        ...(choice.model ? { model: choice.model } : {}),
        ...(choice.worktree
          ? { worktree: typeof choice.worktree === "string" ? { branch: choice.worktree } : true }
          : {}),
      },
    }),
  );
  return { id: res.id, created: true };
}
