import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools } from "../testing/fake-provider.js";

/**
 * Approval rules: the /permissions/rules API, remembering an answer on bash-confirm, matching on the parsed command
 * line, precedence (deny > ask > allow, a saved rule never overriding a configured deny or ask), project binding to
 * the git top level, persistence. Commands really run, in the real sandbox.
 */
describe("permission rules", function () {
  this.timeout(60_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let root: string;
  let repo: string;
  let other: string;

  const start = async (config: Record<string, unknown> = {}, home?: string) =>
    startTestDaemon({ home, config: { provider: { baseURL: fake.url, apiKey: "k", model: "m" }, ...config } });

  beforeEach(async () => {
    fake = await startFakeProvider();
    root = realpathSync(mkdtempSync(join(tmpdir(), "agentd-rules-")));
    repo = join(root, "repo");
    other = join(root, "other");
    for (const dir of [join(repo, "a"), join(repo, "b"), other]) mkdirSync(dir, { recursive: true });
    execFileSync("git", ["init", "-q", repo]);
    execFileSync("git", ["init", "-q", other]);
    d = await start();
  });
  afterEach(async () => {
    await d.cleanup();
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** One bash call in a new session of `cwd`; answers a confirmation with `answer` (plus `remember`) when asked. */
  async function bash(
    cwd: string,
    command: string,
    answer?: { allow: boolean; remember?: Record<string, unknown> },
  ): Promise<{ asked: Array<Record<string, unknown>>; result: Record<string, unknown> & { content: string } }> {
    const id = await d.createSession({ cwd });
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(tools([{ name: "bash", args: { command }, id: "b1" }]), text("ok"));
    await d.post(`/sessions/${id}/chat`, { text: "go" });
    const first = await sse.waitFor((f) => f.json?.type === "bash_confirm" || f.json?.type === "tool_end", 30_000);
    const asked: Array<Record<string, unknown>> = [];
    if (first.json.type === "bash_confirm") {
      asked.push(first.json);
      if (!answer) throw new Error(`unexpected confirmation: ${first.json.reason}`);
      const res = await d.post(`/sessions/${id}/bash-confirm`, { id: first.json.id, ...answer });
      expect(res.status, res.text).to.equal(202);
    }
    const end = await sse.waitFor((f) => f.json?.type === "tool_end", 30_000);
    await sse.waitFor((f) => f.json?.type === "end", 30_000);
    sse.close();
    return { asked, result: end.json.result };
  }

  it("adds, lists and revokes rules; project rules bind to the git top level", async () => {
    const added = await d.post("/permissions/rules", {
      scope: "project",
      action: "allow",
      pattern: "npm run test *",
      cwd: join(repo, "a"),
    });
    expect(added.status, added.text).to.equal(201);
    expect(added.body).to.include({ scope: "project", action: "allow", pattern: "npm run test *", tool: "bash" });
    expect(added.body).to.include({ project: repo, source: "user" });
    const global = (await d.post("/permissions/rules", { scope: "global", action: "deny", pattern: "git push *" }))
      .body;
    expect((await d.get("/permissions/rules")).body.rules.map((r: { id: string }) => r.id)).to.deep.equal([
      added.body.id,
      global.id,
    ]);
    // ?cwd= lists what can apply there: the project's rules from any directory of it, not another project's.
    const inB = (await d.get(`/permissions/rules?cwd=${encodeURIComponent(join(repo, "b"))}`)).body.rules;
    expect(inB.map((r: { id: string }) => r.id)).to.deep.equal([added.body.id, global.id]);
    const inOther = (await d.get(`/permissions/rules?cwd=${encodeURIComponent(other)}`)).body.rules;
    expect(inOther.map((r: { id: string }) => r.id)).to.deep.equal([global.id]);

    expect((await d.delete(`/permissions/rules/${global.id}`)).status).to.equal(200);
    expect((await d.delete(`/permissions/rules/${global.id}`)).status).to.equal(404);
    expect((await d.get("/permissions/rules")).body.rules).to.have.length(1);
  });

  it("refuses bad input with 400 (and 404 for an unknown id), saving nothing", async () => {
    const bad: Array<Record<string, unknown>> = [
      { scope: "planet", action: "allow", pattern: "ls" },
      { scope: "global", action: "maybe", pattern: "ls" },
      { scope: "global", action: "allow", pattern: "" },
      { scope: "global", action: "allow", pattern: "   " },
      { scope: "global", action: "allow", pattern: "rm -rf x && ls" },
      { scope: "global", action: "allow", pattern: "echo 'unterminated" },
      { scope: "global", action: "allow", pattern: "* everything" },
      { scope: "project", action: "allow", pattern: "ls" },
      { scope: "project", action: "allow", pattern: "ls", cwd: join(root, "missing") },
      { scope: "session", action: "allow", pattern: "ls" },
    ];
    for (const body of bad) {
      const res = await d.post("/permissions/rules", body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error, JSON.stringify(body)).to.be.a("string").and.not.equal("");
    }
    expect(
      (await d.post("/permissions/rules", { scope: "session", action: "allow", pattern: "ls", sessionId: "nope" }))
        .status,
    ).to.equal(404);
    expect((await d.delete("/permissions/rules/r_unknown")).status).to.equal(404);
    expect((await d.get("/permissions/rules")).body.rules).to.deep.equal([]);
    expect(existsSync(join(d.home, "permissions.json"))).to.equal(false);
  });

  it("keeps saved rules across a restart in a private file; concurrent writes are all kept", async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        d.post("/permissions/rules", { scope: "global", action: "allow", pattern: `tool${i} *` }),
      ),
    );
    expect(results.map((r) => r.status)).to.deep.equal(Array(12).fill(201));
    const file = join(d.home, "permissions.json");
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    const home = d.home;
    await d.stop();
    d = await start({}, home);
    const patterns = (await d.get("/permissions/rules")).body.rules.map((r: { pattern: string }) => r.pattern);
    expect(patterns.sort()).to.deep.equal(Array.from({ length: 12 }, (_, i) => `tool${i} *`).sort());
    expect(JSON.parse(readFileSync(file, "utf8")).rules).to.have.length(12);
  });

  it("remembers an answer as a rule: the same command is not asked again, a compound line still is", async () => {
    mkdirSync(join(repo, "a", "build"));
    const first = await bash(join(repo, "a"), "rm -rf ./build", { allow: true, remember: { scope: "project" } });
    expect(first.asked[0]).to.include({ suggestedRule: "rm -rf ./build" });
    expect(first.asked[0]?.reasons).to.deep.equal(["dangerous"]);
    expect(existsSync(join(repo, "a", "build"))).to.equal(false);
    const rules = (await d.get("/permissions/rules")).body.rules;
    expect(rules).to.have.length(1);
    expect(rules[0]).to.include({ scope: "project", action: "allow", pattern: "rm -rf ./build", project: repo });

    mkdirSync(join(repo, "b", "build"));
    const again = await bash(join(repo, "b"), "rm -rf ./build");
    expect(again.asked).to.have.length(0);
    expect(existsSync(join(repo, "b", "build"))).to.equal(false);

    // The rule covers only the command it names: the second part of this line is still asked about (and declined).
    const compound = await bash(join(repo, "b"), "rm -rf ./build && rm -rf ~", { allow: false });
    expect(compound.asked[0]?.reasons).to.deep.equal(["dangerous"]);
    expect(String(compound.asked[0]?.reason)).to.include("rm -rf ~").and.not.include("./build;");
    // Another project is not covered.
    mkdirSync(join(other, "build"));
    const elsewhere = await bash(other, "rm -rf ./build", { allow: false });
    expect(elsewhere.asked).to.have.length(1);
    expect(existsSync(join(other, "build"))).to.equal(true);
  });

  it("saves a deny rule from a declined answer and refuses the command without asking again", async () => {
    const denied = await bash(repo, "git push --force origin main", {
      allow: false,
      remember: { scope: "global", pattern: "git push --force *" },
    });
    expect(denied.asked[0]?.suggestedRule).to.equal("git push --force origin main");
    const rules = (await d.get("/permissions/rules")).body.rules;
    expect(rules[0]).to.include({ action: "deny", pattern: "git push --force *", scope: "global" });
    const refused = await bash(other, "echo start; git push --force origin dev");
    expect(refused.asked).to.have.length(0);
    expect(refused.result.content).to.include("git push --force *").and.include("Not run");
  });

  it("saves nothing and keeps the question open when the remembered pattern is bad", async () => {
    const id = await d.createSession({ cwd: repo });
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(tools([{ name: "bash", args: { command: "rm -rf ./x" }, id: "b1" }]), text("ok"));
    await d.post(`/sessions/${id}/chat`, { text: "go" });
    const ask = (await sse.waitFor((f) => f.json?.type === "bash_confirm", 30_000)).json;
    const bad = await d.post(`/sessions/${id}/bash-confirm`, {
      id: ask.id,
      allow: true,
      remember: { scope: "global", pattern: "rm -rf ./x; rm -rf /" },
    });
    expect(bad.status).to.equal(400);
    expect((await d.get("/permissions/rules")).body.rules).to.deep.equal([]);
    expect((await d.get(`/sessions/${id}`)).body.pendingConfirmations).to.have.length(1);
    expect((await d.post(`/sessions/${id}/bash-confirm`, { id: ask.id, allow: false })).status).to.equal(202);
    await sse.waitFor((f) => f.json?.type === "end", 30_000);
    sse.close();
  });

  it("lets configured deny and ask rules win over rules the user saved; config rules cannot be deleted", async () => {
    const home = d.home;
    await d.stop();
    d = await start(
      {
        permissions: {
          rules: [
            { action: "deny", pattern: "git push *" },
            { action: "ask", pattern: "touch *" },
          ],
        },
      },
      home,
    );
    const listed = (await d.get("/permissions/rules")).body.rules;
    expect(listed.map((r: { source: string; id: string }) => [r.source, r.id])).to.deep.equal([
      ["config", "config-1"],
      ["config", "config-2"],
    ]);
    expect((await d.delete("/permissions/rules/config-1")).status).to.equal(409);
    for (const pattern of ["git push *", "touch *"]) {
      expect((await d.post("/permissions/rules", { scope: "global", action: "allow", pattern })).status).to.equal(201);
    }
    const push = await bash(repo, "git push origin main");
    expect(push.asked).to.have.length(0);
    expect(push.result.content).to.include("Not run").and.include("config");
    const touched = await bash(repo, "touch made-here", { allow: false });
    expect(touched.asked[0]?.reasons).to.deep.equal(["rule"]);
    expect(existsSync(join(repo, "made-here"))).to.equal(false);
  });

  it("allows the network for a command through a rule, without asking", async () => {
    const server = await new Promise<Server>((resolve) => {
      const s = createServer((socket) => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"));
      s.listen(0, "127.0.0.1", () => resolve(s));
    });
    try {
      const port = (server.address() as { port: number }).port;
      await d.post("/permissions/rules", { scope: "project", action: "allow", pattern: "curl *", cwd: repo });
      const r = await bash(repo, `curl -s -o /dev/null -w 'code=%{http_code}' http://127.0.0.1:${port}/`);
      expect(r.asked).to.have.length(0);
      expect(r.result.content).to.include("code=200");
    } finally {
      server.close();
    }
  });
});
