import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "chai";
import { ApiClient, makeTempHome } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider } from "../testing/fake-provider.js";

const BUNDLER = fileURLToPath(new URL("../scripts/bundle.js", import.meta.url));
const BUNDLE = fileURLToPath(new URL("../host/main.bundle.js", import.meta.url));

async function waitForFile(file: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!existsSync(file)) {
    if (child.exitCode !== null) throw new Error(`bundled daemon exited: ${stderr()}`);
    if (Date.now() > deadline) throw new Error(`bundled daemon not ready: ${stderr()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("bundled build (npm run build:bundle)", () => {
  let fake: FakeProvider;
  let child: ChildProcess | undefined;
  before(async () => {
    await promisify(execFile)(process.execPath, [BUNDLER]);
    fake = await startFakeProvider();
  });
  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child?.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    await fake.close();
  });

  it("serves the API and streams a turn from the provider to an SSE client", async () => {
    const home = makeTempHome();
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env))
      if (!k.startsWith("AGENTD_") && !k.startsWith("OPENAI_")) env[k] = v;
    Object.assign(env, { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "k", AGENTD_MODEL: "fake-model" });
    let stderr = "";
    child = spawn(process.execPath, [BUNDLE, "serve", "--port", "0", "--home", home], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    await waitForFile(join(home, "server.json"), child, () => stderr);
    const info = JSON.parse(readFileSync(join(home, "server.json"), "utf8")) as { url: string; token: string };
    const api = new ApiClient(info.url, info.token);
    const id = await api.createSession({ cwd: home });
    const sse = await api.sse(`/sessions/${id}/events`);
    await sse.waitForType("status");
    fake.script({ steps: [{ content: "Hel" }, { content: "lo" }] });
    expect((await api.post(`/sessions/${id}/chat`, { text: "hi" })).status).to.equal(202);
    await sse.waitForType("end", 15_000);
    sse.close();
    expect(
      sse
        .ofType("token")
        .map((f) => f.json.text)
        .join(""),
    ).to.equal("Hello");
    // Bad input still gets the spec's clear error from the bundled build (validators are compiled lazily).
    const bad = await api.post(`/sessions/${id}/chat`, { nope: 1 });
    expect(bad.status).to.equal(400);
    expect(bad.body).to.have.property("error");
  });
});

describe("ApiError across module copies", () => {
  it("is recognised when thrown by another copy of core (a plugin importing agentd next to a bundled daemon)", async () => {
    const own = await import("../core/errors.js");
    // A query string loads a second, separate instance of the same module.
    const other = (await import(`../core/errors.js?copy=${Date.now()}`)) as typeof own;
    const err = other.ApiError.badRequest("bad thing");
    expect(err).to.not.be.instanceOf(own.ApiError);
    expect(own.isApiError(err)).to.equal(true);
    expect(own.isApiError(new Error("plain"))).to.equal(false);
  });
});
