/**
 * Part of `npm run build` (scripts/bundle.ts), in its own node: the training run that writes the V8 code caches of
 * the bundled runtime and the pre-bundled CommonJS files (host/code-cache.ts). It sets the daemon's V8 flags first, as
 * `agentd serve` does (V8 takes a cache only under the flags it was made with), then does what a client's first
 * minutes do: the daemon starts on a temporary home with a local fake provider, answers its first request, opens a
 * session, streams a turn and lists its sessions. V8 then holds every function that ran compiled, and the caches keep
 * them: a fresh daemon neither parses nor compiles that code again (node 20 has no compile cache of its own).
 * Arguments: the pre-bundled files, whose caches are written whether or not the run loaded them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

(await import("../host/v8-flags.js")).setDaemonFlags();
const { recordLoadedScripts, writeCodeCache, writeCodeCaches } = await import("../host/code-cache.js");
recordLoadedScripts();
// The bundle's entries, as a third-party plugin and `agentd serve` load them: one runtime, through runtime.js.
const { startDaemon } = await import("../bundle/daemon.js");
const { ApiClient, startFakeProvider } = await import("../bundle/testing.js");

const home = mkdtempSync(join(tmpdir(), "agentd-training-"));
const fake = await startFakeProvider();
try {
  const daemon = await startDaemon({
    home,
    port: 0,
    env: {
      HOME: home,
      PATH: process.env.PATH ?? "",
      AGENTD_LOG_LEVEL: "warn",
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: "training",
      AGENTD_MODEL: "fake-model",
    },
  });
  try {
    const api = new ApiClient(daemon.url, daemon.info.token);
    await api.get("/sessions");
    const id = await api.createSession({ cwd: home });
    const events = await api.sse(`/sessions/${id}/events`);
    fake.script({ steps: [{ content: "Hello" }, { content: " there." }] });
    const chat = await api.post(`/sessions/${id}/chat`, { text: "hi" });
    if (chat.status !== 202) throw new Error(`training turn: ${chat.status} ${chat.text}`);
    await events.waitForType("end", 30_000);
    events.close();
    await api.get(`/sessions/${id}`);
    await api.get("/sessions");
  } finally {
    await daemon.stop();
  }
} finally {
  await fake.close();
  rmSync(home, { recursive: true, force: true });
}
const trained = new Set(writeCodeCaches());
for (const f of process.argv.slice(2)) if (!trained.has(f)) writeCodeCache(f);
