/** Mounts the interactive client and resolves when it quits. */
import { writeFileSync } from "node:fs";
import { render } from "ink";
import type { DaemonConnection } from "../../api/daemon.js";
import { InputHistory } from "../history.js";
import { App } from "./App.js";

export async function startApp(opts: {
  conn: DaemonConnection;
  sessionId: string;
  firstPrompt?: string;
}): Promise<void> {
  let current = opts.sessionId;
  const app = render(
    <App
      conn={opts.conn}
      sessionId={opts.sessionId}
      firstPrompt={opts.firstPrompt}
      history={new InputHistory(opts.conn.home)}
      onSession={(id) => {
        current = id;
      }}
    />,
    { exitOnCtrlC: false, patchConsole: false },
  );
  // After Ink's own resize listener: the terminal has re-wrapped what is on screen, which Ink cannot erase line by
  // line; clear it all, and the app prints the transcript again at the new width (App's useWidth).
  const clear = () => process.stdout.write("\x1b[2J\x1b[3J\x1b[H");
  process.stdout.on("resize", clear);
  await app.waitUntilExit();
  // For `npm run bench`: the client's own CPU time, written where AGENTD_CLIENT_STATS says.
  if (process.env.AGENTD_CLIENT_STATS) {
    const cpu = process.cpuUsage();
    writeFileSync(process.env.AGENTD_CLIENT_STATS, JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000 }));
  }
  process.stdout.off("resize", clear);
  process.stdout.write(`session ${current} stays in the daemon; resume it with: agentd chat --session ${current}\n`);
}
