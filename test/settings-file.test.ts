import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { makeTempHome, spawnDaemon, startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, tools } from "../testing/fake-provider.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

const readSettings = (home: string): Json => JSON.parse(readFileSync(join(home, "settings.json"), "utf8"));

describe("daemon-managed settings (settings.json), global commands and provider set-up", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let home: string;

  const start = (env: Record<string, string> = {}, config?: Record<string, unknown>) =>
    startTestDaemon({
      home,
      config: config ?? { provider: { baseURL: fake.url, apiKey: "sk-config", model: "fake-model" } },
      env,
    });
  const global = (command: string) => d.post("/settings/command", { command });

  beforeEach(async () => {
    fake = await startFakeProvider();
    // The models these tests switch to: /model refuses one the provider does not list.
    fake.setModels(["fake-model", "other-model", "m-1", "saved-model"]);
    home = makeTempHome();
  });
  afterEach(async () => {
    await d?.cleanup();
    rmSync(home, { recursive: true, force: true });
    await fake.close();
  });

  it("changes defaults with global commands, applies them at once, and keeps them across a restart", async () => {
    d = await start();
    const old = await d.createSession({ cwd: home });

    const cap = await global("/turn-cap 20");
    expect(cap.status).to.equal(200);
    expect(cap.body.result).to.be.a("string").and.include("20");
    expect(cap.body.data).to.include({ default: 20, effective: 20 });
    expect((await global("/model other-model")).body.data).to.include({ model: "other-model" });
    expect((await global("/permissions bypass")).body.data).to.include({ permissionMode: "bypass" });
    expect((await global("/theme light")).body.data).to.include({ theme: "light" });
    expect((await global("/reasoning high")).body.data).to.include({ reasoning: "high" });
    expect((await global("/persona architect")).body.data).to.include({ persona: "architect" });

    // Invalid arguments: 400 with a reason; nothing changes.
    for (const bad of ["/turn-cap 5", "/turn-cap lots", "/permissions maybe", "/theme neon", "/reasoning extreme"]) {
      const res = await global(bad);
      expect(res.status, bad).to.equal(400);
      expect(res.body.error, bad).to.be.a("string").and.not.equal("");
    }
    expect((await global("/persona nobody")).status).to.equal(400);

    const cfg = (await d.get("/config")).body;
    expect(cfg).to.include({ model: "other-model", persona: "architect", theme: "light", permissionMode: "bypass" });
    expect(cfg).to.include({ maxTurnIterations: 20, reasoning: "high" });
    expect(cfg.settings.maxTurnIterations).to.deep.equal({ value: 20, source: "settings" });
    expect(cfg.settings["provider.model"]).to.deep.equal({ value: "other-model", source: "settings" });
    expect(cfg.settings["provider.baseURL"]).to.deep.equal({ value: fake.url, source: "config" });
    expect(cfg.settings["provider.apiKey"]).to.deep.equal({ source: "config" });
    expect(cfg.settings.contextWindow).to.equal(undefined);
    expect(JSON.stringify(cfg)).to.not.include("sk-config");

    // New sessions get the new defaults; the existing one keeps its own settings.
    const fresh = await d.createSession({ cwd: home });
    const view = (await d.get(`/sessions/${fresh}`)).body;
    expect(view).to.include({ model: "other-model", persona: "architect" });
    const perm = (id: string) => d.post(`/sessions/${id}/command`, { command: "/permissions" });
    expect((await perm(fresh)).body.data.permissionMode).to.equal("bypass");
    expect((await perm(old)).body.data.permissionMode).to.equal("default");
    expect((await d.post(`/sessions/${fresh}/command`, { command: "/reasoning" })).body.data.reasoning).to.equal(
      "high",
    );
    // A session's own value overrides the default for that session only.
    const own = await d.post(`/sessions/${old}/command`, { command: "/turn-cap 50" });
    expect(own.body.data).to.include({ turnCap: 50, default: 20, effective: 50 });
    expect((await d.post(`/sessions/${fresh}/command`, { command: "/turn-cap" })).body.data.effective).to.equal(20);

    // The file: private, and the values survive a restart.
    expect(statSync(join(home, "settings.json")).mode & 0o777).to.equal(0o600);
    expect(readSettings(home)).to.deep.include({ maxTurnIterations: 20, theme: "light", permissionMode: "bypass" });
    await d.stop();
    d = await start();
    const again = (await d.get("/config")).body;
    expect(again).to.include({ model: "other-model", persona: "architect", maxTurnIterations: 20, theme: "light" });
    expect((await global("/turn-cap reset")).body.data.default).to.equal(500);
    expect(readSettings(home)).to.not.have.property("maxTurnIterations");
    expect((await d.get("/config")).body.settings.maxTurnIterations).to.deep.equal({ value: 500, source: "default" });
  });

  it("applies the default turn cap to the next turn without a restart", async () => {
    d = await start();
    const id = await d.createSession({ cwd: home });
    expect((await global("/turn-cap 10")).status).to.equal(200);
    fake.script(...Array.from({ length: 12 }, (_, i) => tools([{ name: "no_such_tool", id: `c${i}` }])));
    const sse = await d.sse(`/sessions/${id}/events`);
    await d.post(`/sessions/${id}/chat`, { text: "loop" });
    const notice = await sse.waitFor((f) => f.json?.type === "notice" && /iteration cap/.test(f.json.message));
    expect(notice.json.message).to.include("(10)");
    await sse.waitForType("end");
    expect(fake.requests).to.have.length(10);
    sse.close();
  });

  it("serialises concurrent writes: every change is kept", async () => {
    d = await start();
    const commands = [
      "/turn-cap 42",
      "/model m-1",
      "/permissions bypass",
      "/theme nord",
      "/reasoning low",
      "/persona reviewer",
    ];
    const results = await Promise.all(commands.map((c) => global(c)));
    for (const r of results) expect(r.status).to.equal(200);
    expect(readSettings(home)).to.deep.equal({
      maxTurnIterations: 42,
      provider: { model: "m-1" },
      permissionMode: "bypass",
      theme: "nord",
      reasoning: "low",
      defaultPersona: "reviewer",
    });
  });

  it("refuses to start on a broken or hand-edited settings.json, naming the file and key, and keeps the file", async () => {
    const file = join(home, "settings.json");
    const cases: Array<[string, RegExp]> = [
      ["{ not json", /settings\.json: not valid JSON/],
      [JSON.stringify({ maxTurnIterations: 5 }), /settings\.json: "maxTurnIterations" must be >= 10/],
      [JSON.stringify({ colour: "red" }), /settings\.json: unknown key "colour"/],
      [JSON.stringify({ provider: { baseURL: "ftp://x" } }), /settings\.json: "provider\.baseURL"/],
      ["[]", /settings\.json: the settings must be a JSON object/],
    ];
    for (const [content, message] of cases) {
      writeFileSync(file, content);
      let error: unknown;
      try {
        d = await start();
      } catch (err) {
        error = err;
      }
      expect(String(error), content).to.match(message);
      expect(readFileSync(file, "utf8")).to.equal(content);
    }
    d = undefined as unknown as TestDaemon;
  });

  it("reports a failed write and keeps the previous values", async () => {
    d = await start();
    // settings.json cannot be replaced: a non-empty directory stands where the file goes.
    mkdirSync(join(home, "settings.json", "blocker"), { recursive: true });
    const res = await global("/turn-cap 20");
    expect(res.status).to.equal(500);
    expect(res.body.error).to.match(/Could not save settings\.json: E[A-Z]+/);
    expect((await d.get("/config")).body.maxTurnIterations).to.equal(500);
  });

  it("agentd serve exits with the file and key on stderr when settings.json is invalid", async () => {
    writeFileSync(join(home, "settings.json"), JSON.stringify({ permissionMode: "sometimes" }));
    let error: unknown;
    try {
      const p = await spawnDaemon(home);
      p.child.kill("SIGKILL");
    } catch (err) {
      error = err;
    }
    expect(String(error)).to.match(/agentd: .*settings\.json: "permissionMode" must be one of default, bypass/);
    d = undefined as unknown as TestDaemon;
  });

  it("environment variables win, and the reply says so", async () => {
    d = await start({ AGENTD_MODEL: "env-model" });
    const res = await global("/model saved-model");
    expect(res.status).to.equal(200);
    expect(res.body.result).to.include("AGENTD_MODEL");
    expect(readSettings(home).provider).to.deep.equal({ model: "saved-model" });
    const cfg = (await d.get("/config")).body;
    expect(cfg.model).to.equal("env-model");
    expect(cfg.settings["provider.model"]).to.deep.equal({ value: "env-model", source: "env" });
  });

  describe("PUT /settings/provider", () => {
    let keyed: FakeProvider;
    beforeEach(async () => {
      keyed = await startFakeProvider({ apiKey: "sk-right-key" });
    });
    afterEach(() => keyed.close());

    it("verifies, saves and applies a provider without a restart; never returns or logs the key", async () => {
      d = await start({}, {});
      expect((await d.get("/config")).body).to.include({ providerConfigured: false, hasApiKey: false });
      const bad = await d.request("PUT", "/settings/provider", { baseURL: keyed.url, apiKey: "sk-wrong-key" });
      expect(bad.status).to.equal(400);
      expect(bad.body.error).to.match(/verification failed: API key rejected/);
      expect(bad.text).to.not.include("sk-wrong-key");
      expect(() => readSettings(home)).to.throw();

      const res = await d.request("PUT", "/settings/provider", {
        baseURL: keyed.url,
        apiKey: "sk-right-key",
        model: "fake-model",
      });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ ok: true, baseURL: keyed.url, model: "fake-model", hasApiKey: true });
      expect(res.body.overriddenByEnv).to.deep.equal([]);
      expect(res.body.verification).to.include({ ok: true, probe: "ok" });
      expect(res.text).to.not.include("sk-right-key");
      expect(readSettings(home).provider).to.deep.equal({
        baseURL: keyed.url,
        apiKey: "sk-right-key",
        model: "fake-model",
      });
      const cfg = (await d.get("/config")).body;
      expect(cfg).to.include({ providerConfigured: true, hasApiKey: true, model: "fake-model" });
      expect(cfg.settings["provider.apiKey"]).to.deep.equal({ source: "settings" });
      expect((await d.get("/models/cached")).body.map((m: Json) => m.id)).to.deep.equal(["fake-model"]);

      // The next turn uses it.
      const id = await d.createSession({ cwd: home });
      const sse = await d.sse(`/sessions/${id}/events`);
      await d.post(`/sessions/${id}/chat`, { text: "hello" });
      const end = await sse.waitForType("end");
      expect(end.json.reason).to.equal("stop");
      expect(keyed.requests).to.have.length(1);
      sse.close();

      // Without apiKey, the saved key is kept for the same endpoint.
      const again = await d.request("PUT", "/settings/provider", { baseURL: keyed.url, model: "other" });
      expect(again.status).to.equal(200);
      expect(readSettings(home).provider).to.include({ apiKey: "sk-right-key", model: "other" });

      await d.stop();
      expect(readFileSync(join(home, "agentd.log"), "utf8")).to.not.include("sk-right-key");
      expect(readFileSync(join(home, "agentd.log"), "utf8")).to.not.include("sk-wrong-key");
    });

    it("answers 400 for a bad or unreachable endpoint, and says which fields the environment overrides", async () => {
      d = await start({ OPENAI_BASE_URL: fake.url });
      expect((await d.request("PUT", "/settings/provider", { baseURL: "not a url" })).status).to.equal(400);
      expect((await d.request("PUT", "/settings/provider", { baseURL: "file:///etc/passwd" })).status).to.equal(400);
      expect((await d.request("PUT", "/settings/provider", {})).status).to.equal(400);
      const down = await d.request("PUT", "/settings/provider", { baseURL: "http://127.0.0.1:9/v1" });
      expect(down.status).to.equal(400);
      expect(down.body.probe).to.equal("unreachable");
      const res = await d.request("PUT", "/settings/provider", { baseURL: keyed.url, apiKey: "sk-right-key" });
      expect(res.status).to.equal(200);
      expect(res.body.overriddenByEnv).to.deep.equal(["baseURL"]);
      expect(res.body.message).to.include("OPENAI_BASE_URL");
      expect(res.body.baseURL).to.equal(fake.url);
    });
  });
});
