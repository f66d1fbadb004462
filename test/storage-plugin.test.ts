import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { makeTempHome, spawnDaemon, startTestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, turn } from "../testing/fake-provider.js";
import asyncStorePlugin from "./support/async-store.js";
import { storeConfig } from "./support/stress/crash.js";

type Json = Record<string, unknown>;

/**
 * The session store is a plugin: another one (here the deliberately asynchronous test store, loaded from the config
 * like any third-party plugin) takes the place of storage-sqlite, and the daemon's promises hold on it.
 * `npm run test:async-store` runs the whole black-box suite on that store.
 */
describe("a storage plugin in place of storage-sqlite", function () {
  this.timeout(40_000);
  let home: string;
  let fake: FakeProvider;

  beforeEach(async () => {
    home = makeTempHome();
    fake = await startFakeProvider();
  });
  afterEach(async () => {
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("refuses to start without any session store, saying why", async () => {
    const builtins = builtinPlugins.filter((p) => p.manifest.id !== "storage-sqlite").map(builtinSource);
    const err = await startTestDaemon({ home, builtins }).then(
      (d) => d.stop().then(() => undefined),
      (e: Error) => e,
    );
    expect(err?.message).to.match(/no session store: the storage-sqlite plugin is disabled/);
  });

  it("keeps every guarantee across a SIGKILL on an asynchronous store: 202, one end per turn, exact replay", async () => {
    const { manifest } = asyncStorePlugin;
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({ provider: { baseURL: fake.url, apiKey: "sk-test", model: "m" }, ...storeConfig(home, "async") }),
    );
    const p = await spawnDaemon(home);
    let seenBefore: number[] = [];
    let firstEnd = 0;
    let id = "";
    try {
      const plugins = (await p.client.get("/server/status")).body.plugins as Json[];
      expect(plugins.find((x) => x.id === manifest.id)).to.deep.include({ state: "active", origin: "config" });
      expect(plugins.find((x) => x.id === "storage-sqlite")?.state).to.equal("disabled");

      id = (await p.client.post("/sessions", {})).body.id as string;
      const sse = await p.client.sse(`/sessions/${id}/events`);
      fake.script(turn({ content: "first answer" }));
      expect((await p.client.post(`/sessions/${id}/chat`, { text: "first" })).status).to.equal(202);
      firstEnd = Number((await sse.waitForType("end")).id);
      fake.script(turn({ content: "half way" }, { waitFor: new Promise(() => {}) }));
      const res = await p.client.post(`/sessions/${id}/chat`, { text: "second", clientMessageId: "cm-2" });
      expect(res.status).to.equal(202);
      // Killed right after the 202 and the first delta: what the 202 promised must be stored.
      await sse.waitFor((f) => f.json?.type === "token" && JSON.stringify(f.json).includes("half"));
      seenBefore = sse.frames.filter((f) => f.id !== undefined).map((f) => Number(f.id));
      sse.close();
    } finally {
      p.child.kill("SIGKILL");
      await p.exited;
    }

    const p2 = await spawnDaemon(home);
    try {
      const view = (await p2.client.get(`/sessions/${id}`)).body;
      expect(view.status).to.equal("idle");
      expect(view.messages.map((m: Json) => [m.role, m.content])).to.deep.equal([
        ["user", "first"],
        ["assistant", "first answer"],
        ["user", "second"],
      ]);
      const history = (await p2.client.get(`/sessions/${id}/events/history`)).body.events as Json[];
      const ends = history.filter((e) => e.type === "end").map((e) => e.payload as Json);
      expect(ends).to.have.length(2);
      expect(ends[0]).to.include({ reason: "stop" });
      expect(ends[1]).to.include({ reason: "aborted", recovered: true });
      expect(
        (await p2.client.post(`/sessions/${id}/chat`, { text: "second", clientMessageId: "cm-2" })).body.status,
      ).to.equal("duplicate");

      // Resuming after the first turn's `end`: every stored event after it, once, in order, none with a number
      // given out before the crash to another event.
      const resumed = await p2.client.sse(`/sessions/${id}/events`, { lastEventId: firstEnd });
      await resumed.waitFor((f) => f.json?.type === "end" && f.json.recovered === true);
      const replayed = resumed.frames.filter((f) => f.id !== undefined).map((f) => Number(f.id));
      resumed.close();
      expect(replayed[0]).to.equal(firstEnd + 1);
      expect(replayed).to.deep.equal([...replayed].sort((a, b) => a - b));
      expect(new Set(replayed).size).to.equal(replayed.length);
      const recovered = history.find((e) => e.type === "end" && (e.payload as Json).recovered === true);
      expect(Number(recovered?.seq)).to.be.greaterThan(Math.max(...seenBefore));
      // (Deltas are written in batches: the last ones before a SIGKILL may be gone, the turn's start is not.)
      const types = resumed.frames.map((f) => f.json?.type);
      expect(types).to.include.members(["status", "user_message", "end"]);
    } finally {
      p2.child.kill("SIGTERM");
      await p2.exited;
    }
  });
});
