import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { startTestDaemon, type TestDaemon } from "./support/daemon.js";
import { type FakeProvider, startFakeProvider, text } from "./support/fake-provider.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/mcp-server.js", import.meta.url));

/** PUT /sessions/{id}/mcp-servers: MCP servers of one session (an editor's), offered to that session only. */
describe("session MCP servers", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let dir: string;

  beforeEach(async () => {
    fake = await startFakeProvider();
    dir = realpathSync(mkdtempSync(join(tmpdir(), "agentd-smcp-")));
    d = await startTestDaemon({ config: { provider: { baseURL: fake.url, apiKey: "k", model: "m" } } });
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

  /** The server connects in the background; poll its status as a client would. */
  async function waitFor(pred: (servers: Array<Record<string, unknown>>) => boolean): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if (pred((await d.get("/mcp/servers")).body)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error("MCP server state not reached");
  }

  it("connects a session's servers for that session only, and closes them when replaced or deleted", async () => {
    const a = await d.createSession({ cwd: dir });
    const b = await d.createSession({ cwd: dir });
    expect((await d.request("PUT", "/sessions/nope/mcp-servers", { mcpServers: {} })).status).to.equal(404);
    expect((await d.request("PUT", `/sessions/${a}/mcp-servers`, { mcpServers: [] })).status).to.equal(400);
    expect((await d.request("PUT", `/sessions/${a}/mcp-servers`, {})).status).to.equal(400);

    const put = await d.request("PUT", `/sessions/${a}/mcp-servers`, {
      mcpServers: { ed: { command: process.execPath, args: [FIXTURE] }, bad: { command: 42 } },
    });
    expect(put.status).to.equal(200);
    expect(put.body.map((s: { name: string }) => s.name)).to.have.members(["ed", "bad"]);
    expect(put.body.find((s: { name: string }) => s.name === "ed")).to.include({ scope: "session", sessionId: a });
    expect(put.body.find((s: { name: string }) => s.name === "bad")?.state).to.equal("failed");
    await waitFor((list) => list.some((s) => s.name === "ed" && s.state === "connected"));

    expect(await offeredTools(a)).to.include("mcp_ed_echo");
    expect(await offeredTools(b)).to.not.include("mcp_ed_echo");

    expect((await d.request("PUT", `/sessions/${a}/mcp-servers`, { mcpServers: {} })).body).to.deep.equal([]);
    await waitFor((list) => !list.some((s) => s.sessionId === a));
    expect(await offeredTools(a)).to.not.include("mcp_ed_echo");

    await d.request("PUT", `/sessions/${b}/mcp-servers`, {
      mcpServers: { ed: { command: process.execPath, args: [FIXTURE] } },
    });
    await waitFor((list) => list.some((s) => s.sessionId === b && s.state === "connected"));
    expect((await d.delete(`/sessions/${b}/permanent`)).status).to.equal(200);
    await waitFor((list) => !list.some((s) => s.sessionId === b));
  });
});
