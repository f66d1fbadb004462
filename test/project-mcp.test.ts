import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools } from "../testing/fake-provider.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/mcp-server.js", import.meta.url));
/** The checkout: the server's code and its node_modules. The sandbox gives project servers a private /tmp, so a
 * checkout under /tmp (a CI clone) must be named to be seen; elsewhere it is visible (read-only) anyway. */
const CHECKOUT = fileURLToPath(new URL("../..", import.meta.url));

/** A project's `.agentd/mcp.json` servers are ignored until the project is trusted, then used by its sessions. */
describe("project MCP servers behind trust", function () {
  this.timeout(60_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let dir: string;

  beforeEach(async () => {
    fake = await startFakeProvider();
    dir = realpathSync(mkdtempSync(join(tmpdir(), "agentd-proj-")));
    mkdirSync(join(dir, ".agentd"));
    writeFileSync(
      join(dir, ".agentd", "mcp.json"),
      JSON.stringify({ mcpServers: { proj: { command: process.execPath, args: [FIXTURE] } } }),
    );
    d = await startTestDaemon({
      config: { provider: { baseURL: fake.url, apiKey: "k", model: "m" }, sandbox: { writable: [CHECKOUT] } },
    });
  });
  afterEach(async () => {
    await d.cleanup();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function offeredTools(id: string): Promise<string[]> {
    const sse = await d.sse(`/sessions/${id}/events`);
    const before = fake.requests.length;
    fake.script(text("ok"));
    await d.post(`/sessions/${id}/chat`, { text: "which tools?" });
    await sse.waitForType("end");
    sse.close();
    const req = fake.requests[before] as { tools?: Array<{ function: { name: string } }> };
    return (req.tools ?? []).map((t) => t.function.name);
  }

  async function waitForServerTools(): Promise<void> {
    // The server process connects in the background (a node process started in the sandbox: seconds on a loaded
    // machine); poll its status as a client would.
    for (let i = 0; i < 800; i++) {
      if (JSON.stringify((await d.get("/mcp/servers")).body).includes("mcp_proj_echo")) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error("the project's MCP server did not connect");
  }

  it("ignores the project's servers before trust and uses them after", async () => {
    const id = await d.createSession({ cwd: dir });
    const trust = await d.get(`/projects/trust?cwd=${encodeURIComponent(dir)}`);
    expect(trust.body).to.deep.include({ trusted: false, hasLocalResources: true });
    expect(trust.body.resources.mcp).to.deep.equal(["proj"]);
    expect(await offeredTools(id)).to.not.include("mcp_proj_echo");
    expect(JSON.stringify((await d.get("/mcp/servers")).body)).to.not.include("proj");

    expect((await d.post("/projects/trust", { cwd: dir, trusted: true })).status).to.equal(200);
    await waitForServerTools();
    expect(await offeredTools(id)).to.include("mcp_proj_echo");
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(tools([{ name: "mcp_proj_echo", args: { text: "from project" }, id: "m1" }]), text("done"));
    await d.post(`/sessions/${id}/chat`, { text: "call it" });
    const end = await sse.waitForType("tool_end");
    expect(end.json.status).to.equal("ok");
    expect(end.json.result.content).to.include("from project");
    await sse.waitForType("end");
    sse.close();

    // Revoking trust disconnects them again.
    await d.post("/projects/trust", { cwd: dir, trusted: false });
    for (let i = 0; i < 100 && JSON.stringify((await d.get("/mcp/servers")).body).includes("mcp_proj_echo"); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await offeredTools(id)).to.not.include("mcp_proj_echo");
  });
});
