import { execFileSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { builtinSource } from "../../host/plugin-sources.js";
import commandsPlugin from "../../plugins/commands/index.js";
import { builtinPlugins } from "../../plugins/index.js";
import toolsFs from "../../plugins/tools-fs/index.js";
import { startTestDaemon, type TestDaemon } from "../../testing/daemon.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider.js";
import type { SseClient } from "../../testing/sse.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
export type Json = any;

export const extras = [toolsFs, commandsPlugin].filter(
  (p) => !builtinPlugins.some((b) => b.manifest.id === p.manifest.id),
);

export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    encoding: "utf8",
  });
}

export function userTexts(messages: Array<{ role: string; content: string | null }>): Array<string | null> {
  return messages.filter((m) => m.role === "user").map((m) => m.content);
}

/** A daemon with the commands plugin on the fake provider, a project directory, one session and its event stream, fresh for each test. */
export function commandsFixture() {
  const fx = {} as { fake: FakeProvider; d: TestDaemon; project: string; id: string; sse: SseClient };

  beforeEach(async () => {
    fx.fake = await startFakeProvider();
    fx.d = await startTestDaemon({
      config: { provider: { baseURL: fx.fake.url, apiKey: "sk-test", model: "fake-model" } },
      builtins: [...builtinPlugins, ...extras].map(builtinSource),
    });
    fx.project = realpathSync(mkdtempSync(join(tmpdir(), "agentd-cmd-")));
    fx.id = await fx.d.createSession({ cwd: fx.project });
    fx.sse = await fx.d.sse(`/sessions/${fx.id}/events`);
    await fx.sse.waitForType("status");
  });
  afterEach(async () => {
    fx.sse.close();
    await fx.d.cleanup();
    await fx.fake.close();
    rmSync(fx.project, { recursive: true, force: true });
  });

  const command = (line: string, sid = fx.id) => fx.d.post<Json>(`/sessions/${sid}/command`, { command: line });
  const global = (line: string) => fx.d.post<Json>("/settings/command", { command: line });
  const endsSoFar = () => fx.sse.ofType("end").length;
  /** Runs `start` and resolves once the turn it starts has ended (the next `end` event). */
  async function untilTurnEnds(start: () => Promise<unknown>) {
    const before = endsSoFar();
    await start();
    return fx.sse.waitFor(() => endsSoFar() > before, 15_000).then(() => fx.sse.ofType("end").at(-1)?.json);
  }
  const chatTurn = (textIn: string) =>
    untilTurnEnds(async () =>
      expect((await fx.d.post(`/sessions/${fx.id}/chat`, { text: textIn })).status).to.equal(202),
    );
  const session = async () => (await fx.d.get<Json>(`/sessions/${fx.id}`)).body;
  return { fx, command, global, endsSoFar, untilTurnEnds, chatTurn, session };
}
