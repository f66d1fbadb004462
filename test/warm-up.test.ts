import { existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { expect } from "chai";
import { definePlugin, type Provider, silentLogger } from "../core/index.js";
import { Registry } from "../core/registry.js";
import type { AnyRoute } from "../core/routes.js";
import { Authenticator } from "../host/http/auth.js";
import { createApp } from "../host/http/server.js";
import { SseHub } from "../host/http/sse.js";
import { builtinSource } from "../host/plugin-sources.js";
import { warmUp } from "../host/warm-up.js";
import { createOpenAIProvider } from "../plugins/provider-openai/provider.js";
import { makeTempHome, startTestDaemon } from "../testing/daemon.js";
import { startFakeProvider } from "../testing/fake-provider.js";

function providerPlugin(id: string, warmUp: () => Promise<void>) {
  const provider: Provider = {
    id,
    description: id,
    stream: async function* () {},
    listModels: async () => [],
    warmUp,
  };
  return builtinSource(
    definePlugin({
      manifest: { id, version: "1.0.0", description: id, capabilities: ["provider"] },
      register: (ctx) => {
        ctx.providers.add(provider);
      },
    }),
  );
}

const ticks = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

describe("warm-up after listening", () => {
  it("warms the providers and the HTTP stack (Ajv, the first validators) only once the first request has arrived", async () => {
    let arrive: () => void = () => {};
    const firstRequest = new Promise<void>((resolve) => {
      arrive = resolve;
    });
    let warmed: () => void = () => {};
    const warmCalled = new Promise<void>((resolve) => {
      warmed = resolve;
    });
    let calls = 0;
    const app = {
      firstRequest,
      warm: async () => {
        calls++;
        warmed();
      },
    };
    let providerWarmed = false;
    const provider: Provider = {
      id: "p",
      description: "p",
      stream: async function* () {},
      listModels: async () => [],
      warmUp: async () => {
        providerWarmed = true;
      },
    };
    const done = warmUp(app, [provider], silentLogger, () => false);
    await ticks(5);
    expect(providerWarmed).to.equal(false);
    expect(calls).to.equal(0);
    arrive();
    await warmCalled;
    await done;
    expect(providerWarmed).to.equal(true);
    expect(calls).to.equal(1);
  });

  it("the request listener's firstRequest resolves when the first request arrives, not before", async () => {
    const app = createApp({
      routes: new Registry<AnyRoute>("route", (r) => `${r.method} ${r.path}`),
      auth: new Authenticator("t0ken"),
      log: silentLogger,
      hub: new SseHub(),
      allowedHosts: new Set(),
      maxBodyBytes: 1024,
      sseQueueBytes: 1024,
      validateResponses: false,
      version: "0.0.0",
    });
    let arrived = false;
    void app.firstRequest.then(() => {
      arrived = true;
    });
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      await ticks(5);
      expect(arrived).to.equal(false);
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/nothing-here`);
      expect(res.status).to.equal(404);
      await app.firstRequest;
      expect(arrived).to.equal(true);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("calls each provider's warmUp after the first request, and a failing one does not harm the daemon", async () => {
    const home = makeTempHome();
    let warmed: (serverInfoWritten: boolean) => void = () => {};
    const warmedAfterListening = new Promise<boolean>((resolve) => {
      warmed = resolve;
    });
    const d = await startTestDaemon({
      home,
      extraPlugins: [
        providerPlugin("warm-failing", () => Promise.reject(new Error("warm-up boom"))),
        providerPlugin("warm-ok", async () => warmed(existsSync(join(home, "server.json")))),
      ],
    });
    try {
      // server.json is written once the daemon listens; the warm-up follows the first request.
      expect((await d.get("/server/identity")).status).to.equal(200);
      expect(await warmedAfterListening).to.equal(true);
      const status = await d.get("/server/status");
      expect(status.status).to.equal(200);
      const ids = status.body.plugins.map((p: { id: string; state: string }) => `${p.id}:${p.state}`);
      expect(ids).to.include.members(["warm-failing:active", "warm-ok:active"]);
    } finally {
      await d.cleanup();
    }
  });

  it("a provider whose warmUp never settles does not hold up the daemon's shutdown", async () => {
    let called: () => void = () => {};
    const warmUpCalled = new Promise<void>((resolve) => {
      called = resolve;
    });
    const d = await startTestDaemon({
      extraPlugins: [
        providerPlugin("warm-forever", () => {
          called();
          return new Promise<void>(() => {});
        }),
      ],
    });
    expect((await d.get("/server/identity")).status).to.equal(200);
    await warmUpCalled;
    await d.cleanup(); // would time out if stop() waited for the warm-up
  });

  it("the OpenAI provider's warmUp loads the SDK and builds its client without contacting the provider", async () => {
    const fake = await startFakeProvider();
    try {
      const p = createOpenAIProvider({ baseURL: fake.url, apiKey: "k", model: "fake-model" });
      await p.warmUp?.();
      // Unconfigured: nothing to build, still no error.
      await createOpenAIProvider({}).warmUp?.();
      expect(fake.requests).to.have.length(0);
      const chunks: string[] = [];
      for await (const delta of p.stream(
        { model: "", messages: [{ role: "user", content: "hi" }] },
        new AbortController().signal,
      ))
        if (delta.type === "content") chunks.push(delta.text);
      expect(chunks.join("")).to.equal("Hello from the fake provider.");
    } finally {
      await fake.close();
    }
  });
});
