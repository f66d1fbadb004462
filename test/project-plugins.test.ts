import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { makeTempHome, startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider } from "../testing/fake-provider.js";

/**
 * A project plugin whose import appends to `log` (a side effect outside the project), which tries to reach the
 * secrets-guarded settings service, and contributes a tool and a command that carry `version`.
 */
function writePlugin(root: string, log: string, version: string): void {
  const dir = join(root, ".agentd", "plugins", "echo");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({
      name: "proj-echo",
      type: "module",
      main: "index.js",
      agentd: { id: "proj-echo", version: "1.0.0", description: "A project plugin", capabilities: ["secrets"] },
    }),
  );
  writeFileSync(
    join(dir, "index.js"),
    `import { appendFileSync } from "node:fs";
const LOG = ${JSON.stringify(log)};
appendFileSync(LOG, "imported ${version}\\n");
export default {
  manifest: { id: "proj-echo", version: "1.0.0", description: "A project plugin" },
  register(ctx) {
    try {
      ctx.services.get({ id: "settings" });
      appendFileSync(LOG, "secrets granted\\n");
    } catch (err) {
      appendFileSync(LOG, "secrets denied: " + err.message + "\\n");
    }
    ctx.tools.add({
      name: "proj_echo",
      description: "Echo ${version}",
      parameters: { type: "object", properties: {} },
      async execute() {
        return { content: "${version}" };
      },
    });
    ctx.personas.add({ name: "proj-persona", label: "Project persona", description: "From a project plugin", prompt: "PROJECT PLUGIN PERSONA", source: "plugin" });
    ctx.commands.add({ name: "projcmd", description: "A project command", run: () => "projcmd ${version}" });
  },
};
`,
  );
}

describe("project plugins: load only for trusted projects, pinned to their content hash", () => {
  let fake: FakeProvider;
  let d: TestDaemon;
  let home: string;
  let project: string;
  let other: string;
  let outside: string;
  let log: string;

  const logLines = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []);

  /** Sends a message, waits for the end of the turn, and returns the tool names the model was offered. */
  async function offeredTools(id: string): Promise<string[]> {
    const sse = await d.sse(`/sessions/${id}/events`);
    try {
      const from = sse.frames.length;
      const index = fake.requests.length;
      expect((await d.post(`/sessions/${id}/chat`, { text: "hi" })).status).to.equal(202);
      await sse.waitFor((f) => f.json?.type === "end", 10_000, from);
      const req = fake.requests[index] as { tools?: Array<{ function: { name: string; description?: string } }> };
      return (req.tools ?? []).map((t) => `${t.function.name}:${t.function.description ?? ""}`);
    } finally {
      sse.close();
    }
  }
  const names = (tools: string[]) => tools.map((t) => t.split(":")[0]);

  const trustEvents = async (id: string) => {
    const res = await d.get(`/sessions/${id}/events/history`);
    return (res.body.events as Array<{ type: string; payload: Record<string, unknown> }>).filter(
      (e) => e.type === "project_trust_required",
    );
  };
  const pluginStatuses = async () =>
    (await d.get("/server/status")).body.plugins as Array<Record<string, unknown> & { id: string }>;
  type PluginRow = { name: string; hash: string; state: string };

  beforeEach(async () => {
    fake = await startFakeProvider();
    home = makeTempHome();
    project = realpathSync(mkdtempSync(join(tmpdir(), "agentd-pp-")));
    other = realpathSync(mkdtempSync(join(tmpdir(), "agentd-pp-other-")));
    outside = realpathSync(mkdtempSync(join(tmpdir(), "agentd-pp-log-")));
    log = join(outside, "plugin.log");
    writePlugin(project, log, "v1");
    d = await startTestDaemon({
      home,
      env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "sk-test-key", AGENTD_MODEL: "fake-model" },
    });
  });

  afterEach(async () => {
    await d.cleanup();
    await fake.close();
    for (const dir of [project, other, outside]) rmSync(dir, { recursive: true, force: true });
  });

  /** A session's trust prompt as GET /sessions lists it, where the plain array and a page agree. */
  async function listedTrust(id: string): Promise<{ resources: { plugins: PluginRow[] } } | undefined> {
    const plain = (await d.get("/sessions")).body as Array<{ id: string; projectTrust?: never }>;
    expect(plain).to.deep.equal((await d.get("/sessions?limit=200")).body.sessions);
    return plain.find((s) => s.id === id)?.projectTrust;
  }

  it("never runs an untrusted project's plugin, and lists it in the trust prompt as new", async () => {
    const id = await d.createSession({ cwd: project });
    const events = await trustEvents(id);
    expect(events).to.have.length(1);
    const prompted = (events[0]?.payload.resources as { plugins: PluginRow[] } | undefined)?.plugins ?? [];
    expect(prompted).to.have.length(1);
    expect(prompted[0]).to.include({ name: "echo", state: "new" });
    expect(prompted[0]?.hash).to.match(/^[0-9a-f]{64}$/);
    const session = await d.get(`/sessions/${id}`);
    expect(session.body.projectTrust?.resources.plugins).to.deep.equal(prompted);

    expect(names(await offeredTools(id))).to.not.include("proj_echo");
    const cmd = await d.post(`/sessions/${id}/command`, { command: "/projcmd" });
    expect(cmd.body.data?.sentAsText).to.equal(true);
    const status = await d.get(`/projects/trust?cwd=${encodeURIComponent(project)}`);
    expect(status.body).to.include({ trusted: false, hasLocalResources: true });
    expect((status.body.resources.plugins as PluginRow[]).map((p) => p.state)).to.deep.equal(["new"]);
    // Distrusting does not load it either.
    await d.post("/projects/trust", { cwd: project, trusted: false });
    expect(names(await offeredTools(id))).to.not.include("proj_echo");
    expect(logLines()).to.deep.equal([]);
    expect((await pluginStatuses()).map((p) => p.id)).to.not.include("proj-echo");
  });

  it("after trust offers its tools and commands to that project's sessions only, and without secrets", async () => {
    const id = await d.createSession({ cwd: project });
    const elsewhere = await d.createSession({ cwd: other });
    const trusted = await d.post("/projects/trust", { cwd: project, trusted: true });
    expect(trusted.status).to.equal(200);
    expect((trusted.body.resources.plugins as PluginRow[]).map((p) => p.state)).to.deep.equal(["trusted"]);
    // Loaded before the answer: imported once, and refused the secrets it asked for.
    expect(logLines()[0]).to.equal("imported v1");
    expect(logLines()[1]).to.match(/^secrets denied: .*pluginCapabilities\.proj-echo/);
    const status = (await pluginStatuses()).find((p) => p.id === "proj-echo");
    expect(status).to.deep.include({ origin: "project", project, state: "active", deniedCapabilities: ["secrets"] });
    expect(status?.capabilities).to.not.include("secrets");

    expect(await offeredTools(id)).to.include("proj_echo:Echo v1");
    expect(names(await offeredTools(elsewhere))).to.not.include("proj_echo");
    const here = await d.post(`/sessions/${id}/command`, { command: "/projcmd" });
    expect(here.body.result).to.equal("projcmd v1");
    const there = await d.post(`/sessions/${elsewhere}/command`, { command: "/projcmd" });
    expect(there.body.data?.sentAsText).to.equal(true);
    const personaNames = async (q: string) =>
      ((await d.get(`/personas?${q}`)).body as Array<{ name: string }>).map((p) => p.name);
    expect(await personaNames(`sessionId=${id}`)).to.include("proj-persona");
    expect(await personaNames(`sessionId=${elsewhere}`)).to.not.include("proj-persona");
    expect((await d.post("/sessions", { cwd: project, persona: "proj-persona" })).status).to.equal(201);
    expect((await d.post("/sessions", { cwd: other, persona: "proj-persona" })).status).to.equal(404);
    // The session of the trusted project shows no prompt.
    expect((await d.get(`/sessions/${id}`)).body.projectTrust).to.equal(undefined);
  });

  it("stops offering a changed plugin until trust is renewed, and the prompt lists it as changed", async () => {
    const id = await d.createSession({ cwd: project });
    await d.post("/projects/trust", { cwd: project, trusted: true });
    expect(names(await offeredTools(id))).to.include("proj_echo");
    // Listed twice: the second listing is made of what the first kept.
    expect(await listedTrust(id)).to.equal(undefined);
    expect(await listedTrust(id)).to.equal(undefined);

    writePlugin(project, log, "v2");
    expect(names(await offeredTools(id))).to.not.include("proj_echo");
    // The session's row did not change, its listed summary did.
    expect((await listedTrust(id))?.resources.plugins.map((p) => p.state)).to.deep.equal(["changed"]);
    // The open session is asked again at that turn (it was asked once, as "new", when it was created).
    const asked = (await trustEvents(id)).map(
      (e) => (e.payload.resources as { plugins: PluginRow[] }).plugins.map((p) => p.state)[0],
    );
    expect(asked).to.deep.equal(["new", "changed"]);
    expect(names(await offeredTools(id))).to.not.include("proj_echo");
    expect(await trustEvents(id)).to.have.length(2);
    expect(logLines().filter((l) => l.startsWith("imported"))).to.deep.equal(["imported v1"]);
    const fresh = await d.createSession({ cwd: project });
    const events = await trustEvents(fresh);
    expect(events).to.have.length(1);
    const rows = (events[0]?.payload.resources as { plugins: PluginRow[] } | undefined)?.plugins ?? [];
    expect(rows.map((p) => [p.name, p.state])).to.deep.equal([["echo", "changed"]]);
    expect((await d.get(`/sessions/${fresh}`)).body.projectTrust?.resources.plugins).to.deep.equal(rows);
    // A turn does not load it either.
    expect(names(await offeredTools(fresh))).to.not.include("proj_echo");
    expect(logLines()).to.not.include("imported v2");

    const renewed = await d.post("/projects/trust", { cwd: project, trusted: true });
    expect((renewed.body.resources.plugins as PluginRow[]).map((p) => p.state)).to.deep.equal(["trusted"]);
    expect(logLines()).to.include("imported v2");
    expect(await offeredTools(id)).to.include("proj_echo:Echo v2");
    expect((await d.get(`/sessions/${fresh}`)).body.projectTrust).to.equal(undefined);
  });

  it("never loads a plugin whose code is a symlink out of its folder (its hash could not pin that code)", async () => {
    const dir = join(project, ".agentd", "plugins", "echo");
    renameSync(join(dir, "index.js"), join(outside, "index.js"));
    symlinkSync(join(outside, "index.js"), join(dir, "index.js"));
    const id = await d.createSession({ cwd: project });
    const trusted = await d.post("/projects/trust", { cwd: project, trusted: true });
    expect(trusted.body.resources.plugins).to.deep.equal([{ name: "echo", hash: "", state: "changed" }]);
    expect(names(await offeredTools(id))).to.not.include("proj_echo");
    expect(logLines()).to.deep.equal([]);
  });

  it("unloads the plugin when trust is revoked, and loads trusted ones again after a restart", async () => {
    const id = await d.createSession({ cwd: project });
    await d.post("/projects/trust", { cwd: project, trusted: true });
    await d.stop();
    d = await startTestDaemon({
      home,
      env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "sk-test-key", AGENTD_MODEL: "fake-model" },
    });
    expect(names(await offeredTools(id))).to.include("proj_echo");

    await d.post("/projects/trust", { cwd: project, trusted: false });
    expect(names(await offeredTools(id))).to.not.include("proj_echo");
    expect((await pluginStatuses()).map((p) => p.id)).to.not.include("proj-echo");
    const cmd = await d.post(`/sessions/${id}/command`, { command: "/projcmd" });
    expect(cmd.body.data?.sentAsText).to.equal(true);
  });
});
