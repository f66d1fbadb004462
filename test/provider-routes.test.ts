import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider } from "../testing/fake-provider.js";

const KEY = "sk-routes-secret-0123456789";

describe("provider routes over HTTP", () => {
  let fake: FakeProvider;
  let d: TestDaemon;
  beforeEach(async () => {
    fake = await startFakeProvider({ apiKey: KEY });
    fake.setModels(["zeta", { id: "alpha", owned_by: "lab", context_length: 32000 }]);
    d = await startTestDaemon({ config: { provider: { baseURL: fake.url, apiKey: KEY, model: "alpha" } } });
  });
  afterEach(async () => {
    await d.cleanup();
    await fake.close();
  });

  it("GET /models discovers the provider's models and fills /models/cached (persisted)", async () => {
    expect((await d.get("/models/cached")).body).to.deep.equal([]);
    const live = await d.get("/models");
    expect(live.status).to.equal(200);
    expect(live.body.map((m: { id: string }) => m.id)).to.deep.equal(["alpha", "zeta"]);
    expect(live.body[0]).to.deep.include({ id: "alpha", ownedBy: "lab", contextWindow: 32000 });
    expect((await d.get("/models/cached")).body).to.deep.equal(live.body);
    await d.stop();
    d = await startTestDaemon({ home: d.home });
    expect((await d.get("/models/cached")).body).to.deep.equal(live.body);
  });

  it("GET /models reports an unreachable or refusing provider as 502 without leaking the key", async () => {
    fake.setModels({ status: 500 });
    const res = await d.get("/models");
    expect(res.status).to.equal(502);
    expect(res.body.error).to.be.a("string");
    expect(res.text).to.not.include(KEY);
  });

  it("POST /provider/verify probes without saving anything", async () => {
    const before = readFileSync(join(d.home, "config.json"), "utf8");
    const ok = await d.post("/provider/verify", { url: fake.url, apiKey: KEY });
    expect(ok.body).to.deep.include({ ok: true, probe: "ok" });
    expect(ok.body.models).to.deep.equal(["alpha", "zeta"]);
    const bad = await d.post("/provider/verify", { url: fake.url, apiKey: "sk-wrong" });
    expect(bad.body).to.deep.include({ ok: false, probe: "auth", status: 401 });
    expect(bad.text).to.not.include("sk-wrong");
    const down = await d.post("/provider/verify", { url: "http://127.0.0.1:9/v1", apiKey: "x" });
    expect(down.body).to.deep.include({ ok: false, probe: "unreachable" });
    expect(readFileSync(join(d.home, "config.json"), "utf8")).to.equal(before);
  });

  it("POST /provider/verify rejects bad bodies with 400", async () => {
    expect((await d.post("/provider/verify", {})).status).to.equal(400);
    expect((await d.post("/provider/verify", { url: "file:///etc/passwd" })).status).to.equal(400);
    expect((await d.post("/provider/verify", { url: "not a url" })).status).to.equal(400);
    expect((await d.post("/provider/verify", { url: fake.url, extra: true })).status).to.equal(400);
  });
});
