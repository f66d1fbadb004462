/**
 * `agentd chat` / `agentd` on a terminal: the interactive client. Without a terminal (a pipe, CI) it behaves like
 * `agentd run`. The UI (Ink + React) is imported only here, so the other commands start without it.
 */
import { connect, openSession, promptAfterWorktree, type SessionChoice } from "./connect.js";
import { EXIT } from "./format.js";
import { runCommand } from "./run.js";

export async function chatCommand(words: string[], opts: SessionChoice): Promise<number> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) return runCommand(words, opts);
  const prompt = promptAfterWorktree(words, opts);
  // Keys typed while the daemon is reached must not be echoed by the terminal; Ink reads them once it is up.
  process.stdin.setRawMode(true);
  // Loading the UI (Ink, React, the layout engine) and reaching the daemon overlap.
  const ui = import("./ui/start.js");
  const conn = await connect(opts.home);
  const { id } = await openSession(conn, opts);
  const { startApp } = await ui;
  await startApp({ conn, sessionId: id, firstPrompt: prompt.join(" ").trim() || undefined });
  try {
    process.stdin.setRawMode(false);
  } catch {
    // stdin already closed: nothing to restore
  }
  // Quit means quit: an idle keep-alive socket or a late completion request must not hold the terminal (what was
  // printed is already on the terminal: writes to a TTY are synchronous).
  process.exit(EXIT.ok);
}
