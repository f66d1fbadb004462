import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { methods } from "@agentclientprotocol/sdk";
import { expect } from "chai";
import { AcpClientHarness } from "./support/acp.js";
import { startTestDaemon, type TestDaemon } from "./support/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools } from "./support/fake-provider.js";

const MCP_FIXTURE = fileURLToPath(new URL("./fixtures/mcp-server.js", import.meta.url));

/** `agentd acp` and the editor's side: its file system, MCP servers, questions and the project trust prompt. */
describe("agentd acp: editor capabilities, MCP servers, questions, trust", function () {
  this.timeout(40_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let cwd: string;
  let acp: AcpClientHarness | undefined;

  beforeEach(async () => {
    fake = await startFakeProvider();
    cwd = realpathSync(mkdtempSync(join(tmpdir(), "agentd-acp-")));
    d = await startTestDaemon({ config: { provider: { baseURL: fake.url, apiKey: "k", model: "m" } } });
  });
  afterEach(async () => {
    await acp?.close();
    acp = undefined;
    await d.cleanup();
    await fake.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  const start = async (handlers: Parameters<typeof AcpClientHarness.start>[1] = {}, caps = {}) => {
    acp = AcpClientHarness.start(d.home, handlers);
    const init = await acp.initialize(caps);
    return { acp, init };
  };

  it("connects the editor's MCP servers for its session only, and closes them when the editor goes", async () => {
    const { acp } = await start();
    const res = await acp.agent.request(methods.agent.session.new, {
      cwd,
      mcpServers: [
        { name: "ed", command: process.execPath, args: [MCP_FIXTURE], env: [{ name: "X", value: "1" }] },
        { type: "sse", name: "legacy", url: "http://127.0.0.1:9/sse", headers: [] },
      ],
    });
    const id = res.sessionId;
    const servers = async () => (await d.get("/mcp/servers")).body as Array<Record<string, unknown>>;
    for (let i = 0; i < 200 && !(await servers()).some((s) => s.name === "ed" && s.state === "connected"); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await servers()).find((s) => s.name === "ed")).to.include({ scope: "session", sessionId: id });
    fake.script(text("ok"));
    await acp.prompt(id, "tools?");
    const offered = (fake.requests[0]?.tools ?? []).map((t) => (t as { function: { name: string } }).function.name);
    expect(offered).to.include("mcp_ed_echo");
    await acp.waitForUpdate(
      (u) => u.update.sessionUpdate === "agent_message_chunk" && JSON.stringify(u).includes("legacy"),
    );
    await acp.close();
    expect((await servers()).some((s) => s.sessionId === id)).to.equal(false);
  });

  it("reads and writes through the editor when it offers its file system (unsaved buffers win)", async () => {
    writeFileSync(join(cwd, "main.ts"), "on disk\n");
    const reads: string[] = [];
    const writes: Array<{ path: string; content: string }> = [];
    const { acp } = await start(
      {
        readTextFile: (req) => {
          reads.push(req.path);
          return "unsaved buffer line 1\nunsaved buffer line 2\n";
        },
        writeTextFile: (req) => {
          writes.push({ path: req.path, content: req.content });
        },
      },
      { fs: { readTextFile: true, writeTextFile: true } },
    );
    const id = await acp.newSession(cwd);
    fake.script(
      tools([{ name: "read", args: { path: "main.ts" }, id: "r1" }]),
      tools([{ name: "write", args: { path: "out.ts", content: "export {};\n" }, id: "w1" }]),
      text("ok"),
    );
    expect((await acp.prompt(id, "look")).stopReason).to.equal("end_turn");
    expect(reads).to.deep.equal([join(cwd, "main.ts")]);
    const result = acp.of(id, "tool_call_update").find((u) => u.toolCallId === "r1" && u.status);
    expect(JSON.stringify(result?.content)).to.include("unsaved buffer line 2").and.not.include("on disk");
    expect(writes).to.deep.equal([{ path: join(cwd, "out.ts"), content: "export {};\n" }]);
    expect(existsSync(join(cwd, "out.ts"))).to.equal(false);
    // The model saw the editor's text too.
    const toolMsg = JSON.stringify(fake.requests[1]?.messages);
    expect(toolMsg).to.include("unsaved buffer line 1");
  });

  it("leaves editor requests its editor cannot serve to the client that can", async () => {
    writeFileSync(join(cwd, "f.txt"), "disk\n");
    const { acp } = await start();
    const id = await acp.newSession(cwd);
    // Another client (here plain HTTP) attached an editor that reads.
    await d.post(`/sessions/${id}/editor`, { readTextFile: true, writeTextFile: false });
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(tools([{ name: "read", args: { path: "f.txt" }, id: "r1" }]), text("ok"));
    const pending = acp.prompt(id, "read");
    const req = (await sse.waitForType("editor_fs_request")).json;
    expect((await d.post(`/sessions/${id}/editor/reply`, { id: req.id, content: "other editor\n" })).status).to.equal(
      202,
    );
    await pending;
    sse.close();
    const done = acp.of(id, "tool_call_update").find((u) => u.toolCallId === "r1" && u.status);
    expect(JSON.stringify(done?.content)).to.include("other editor");
    expect(acp.unoffered).to.deep.equal([]);
  });

  it("asks a question through elicitation, or answers with a refusal the model can act on", async () => {
    const ask = tools([
      {
        name: "question",
        args: {
          questions: [
            {
              question: "Which database?",
              options: [
                { label: "SQLite", value: "sqlite" },
                { label: "Postgres", value: "pg" },
              ],
            },
          ],
        },
        id: "q1",
      },
    ]);
    const forms = (
      await start({ elicitation: () => ({ action: "accept", content: { q0: "pg" } }) }, { elicitation: { form: {} } })
    ).acp;
    const id = await forms.newSession(cwd);
    fake.script(ask, text("Postgres it is"));
    expect((await forms.prompt(id, "set up storage")).stopReason).to.equal("end_turn");
    expect(JSON.stringify(fake.requests[1]?.messages)).to.include("pg");

    await forms.close();
    const plain = AcpClientHarness.start(d.home);
    acp = plain;
    await plain.initialize({});
    const id2 = await plain.newSession(cwd);
    fake.script(ask, text("I chose SQLite"));
    expect((await plain.prompt(id2, "set up storage")).stopReason).to.equal("end_turn");
    expect(JSON.stringify(fake.requests[3]?.messages)).to.include("cannot show questions");
  });

  it("asks once per project whether to trust it before its resources load", async () => {
    writeFileSync(join(cwd, "AGENTS.md"), "Project rule: always answer in haiku.\n");
    const { acp } = await start({
      permission: (req) => ({
        outcome: { outcome: "selected", optionId: req.options.find((o) => o.kind === "allow_always")?.optionId ?? "" },
      }),
    });
    const id = await acp.newSession(cwd);
    fake.script(text("one"), text("two"), text("three"));
    await acp.prompt(id, "hi");
    await acp.prompt(id, "again");
    const id2 = await acp.newSession(cwd);
    await acp.prompt(id2, "hello");
    expect(acp.permissions).to.have.length(1);
    expect(acp.permissions[0]?.toolCall.title).to.include(cwd);
    const trust = await d.get(`/projects/trust?cwd=${encodeURIComponent(cwd)}`);
    expect(trust.body.trusted).to.equal(true);
    // Decided before the first model call: the project's context file is already in it.
    expect(JSON.stringify(fake.requests[0]?.messages)).to.include("always answer in haiku");
  });
});
