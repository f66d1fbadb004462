import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startTestDaemon, type TestDaemon } from "./daemon.js";
import { type FakeProvider, startFakeProvider } from "./fake-provider.js";
import { requireTmux, TmuxPane } from "./tmux.js";

export const AGENTD_MAIN = fileURLToPath(new URL("../../host/main.js", import.meta.url));

/** What each terminal test gets: a fresh daemon on the fake provider, a project directory, at most one pane. */
export interface TerminalWorld {
  fake: FakeProvider;
  d: TestDaemon;
  cwd: string;
  pane: TmuxPane | undefined;
  /** `agentd chat ARGS` in a pane, once the session is loaded. */
  chat(args?: string[], width?: number): Promise<TmuxPane>;
  send(p: TmuxPane, message: string): Promise<void>;
}

/** Registers the hooks of a terminal test suite (tmux required) and returns its per-test world. */
export function terminalWorld(): TerminalWorld {
  const w = {} as TerminalWorld;
  w.chat = async (args = [], width = 100) => {
    w.pane = await TmuxPane.start([process.execPath, AGENTD_MAIN, "--home", w.d.home, "chat", ...args], {
      cwd: w.cwd,
      width,
      height: 40,
    });
    await w.pane.waitFor((s) => s.includes("ask anything") && s.includes("· session "));
    return w.pane;
  };
  w.send = async (p, message) => {
    await p.type(message);
    await p.keys("Enter");
  };
  before(() => requireTmux());
  beforeEach(async () => {
    w.fake = await startFakeProvider();
    w.cwd = realpathSync(mkdtempSync(join(tmpdir(), "agentd-term-")));
    w.d = await startTestDaemon({ config: { provider: { baseURL: w.fake.url, apiKey: "k", model: "fake-model" } } });
  });
  afterEach(async () => {
    await w.pane?.kill();
    w.pane = undefined;
    await w.d.cleanup();
    await w.fake.close();
    rmSync(w.cwd, { recursive: true, force: true });
  });
  return w;
}
