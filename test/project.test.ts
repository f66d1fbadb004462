import { execFileSync } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect } from "chai";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import project from "../plugins/project/index.js";
import { makeTempHome, startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools } from "../testing/fake-provider.js";

const plugins = () =>
  [...builtinPlugins.filter((p) => p.manifest.id !== project.manifest.id), project].map(builtinSource);

function write(file: string, content: string, mode?: number): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
  if (mode !== undefined) chmodSync(file, mode);
}

const BLOCK_SH = `#!/bin/sh
cat > "$AGENTD_PROJECT_DIR/pre-payload.json"
pwd > "$AGENTD_PROJECT_DIR/pre-cwd.txt"
echo "no deploys on Friday" >&2
exit 2
`;

/** A git repository with one of each project resource, and a nested working directory. */
function makeProject(outside: string): { root: string; sub: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "agentd-proj-")));
  execFileSync("git", ["init", "-q", root]);
  const sub = join(root, "src", "lib");
  mkdirSync(sub, { recursive: true });
  write(join(root, "AGENTS.md"), "AGENTS MARKER: use tabs in this repo.");
  write(join(root, ".agentd", "personas", "default.md"), "---\nlabel: Project default\n---\nPROJECT PERSONA MARKER");
  write(
    join(root, ".agentd", "personas", "helper.md"),
    "---\nname: helper\nlabel: Helper\ndescription: Project helper\n---\nHELPER MARKER",
  );
  write(
    join(root, ".agentd", "skills", "deploy", "SKILL.md"),
    "---\nname: deploy\ndescription: Deploy the app\n---\nDEPLOY SKILL BODY",
  );
  write(join(root, ".agentd", "rules", "style.md"), "PROJECT RULE MARKER");
  write(join(root, ".agentd", "hooks", "block.sh"), BLOCK_SH, 0o755);
  write(
    join(root, ".agentd", "hooks.json"),
    JSON.stringify({ hooks: { PreToolUse: [{ matcher: "skill", command: ["./.agentd/hooks/block.sh"] }] } }),
  );
  write(join(root, ".agentd", "ssh.json"), JSON.stringify({ hosts: [{ name: "prod", host: "example.com" }] }));
  write(join(outside, "secret.md"), "OUTSIDE SECRET");
  symlinkSync(join(outside, "secret.md"), join(root, ".agentd", "rules", "escape.md"));
  return { root, sub };
}

function writeGlobal(home: string): void {
  write(
    join(home, "skills", "greet", "SKILL.md"),
    "---\nname: greet\ndescription: Greet people\n---\nGREET SKILL BODY",
  );
  write(join(home, "rules", "global.md"), "GLOBAL RULE MARKER");
}

describe("project: trust and project resources", () => {
  let fake: FakeProvider;
  let d: TestDaemon;
  let home: string;
  let root: string;
  let sub: string;
  let outside: string;

  const start = (config?: Record<string, unknown>) =>
    startTestDaemon({
      home,
      config,
      builtins: plugins(),
      env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "sk-test-key", AGENTD_MODEL: "fake-model" },
    });

  /** Sends a message and resolves once the turn has ended. */
  async function chat(id: string, message: string): Promise<void> {
    const sse = await d.sse(`/sessions/${id}/events`);
    try {
      const from = sse.frames.length;
      const res = await d.post(`/sessions/${id}/chat`, { text: message });
      expect(res.status).to.equal(202);
      await sse.waitFor((f) => f.json?.type === "end", 10_000, from);
    } finally {
      sse.close();
    }
  }

  const systemOf = (i: number) => String(fake.requests[i]?.messages[0]?.content ?? "");
  /** The latest tool result the model saw in request `i`. */
  const toolResultOf = (i: number) =>
    String((fake.requests[i]?.messages ?? []).filter((m) => m.role === "tool").at(-1)?.content ?? "(no tool message)");

  beforeEach(async () => {
    fake = await startFakeProvider();
    home = makeTempHome();
    outside = realpathSync(mkdtempSync(join(tmpdir(), "agentd-outside-")));
    writeGlobal(home);
    ({ root, sub } = makeProject(outside));
    d = await start();
  });

  afterEach(async () => {
    await d.cleanup();
    await fake.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it("reports the project root (git top level) and its local resources, untrusted by default", async () => {
    const res = await d.get(`/projects/trust?cwd=${encodeURIComponent(sub)}`);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ path: root, trusted: false, decidedAt: null, hasLocalResources: true });
    expect(res.body.resources).to.deep.equal({
      personas: ["default", "helper"],
      skills: ["deploy"],
      rules: ["style"],
      contextFiles: ["AGENTS.md"],
      mcp: [],
      hooks: ["PreToolUse [skill]: ./.agentd/hooks/block.sh"],
      ssh: ["prod"],
      plugins: [],
    });
    // The symlink pointing out of the project is not a rule.
    expect(res.body.problems.join("\n")).to.contain("escape.md: points outside the project");

    const plain = realpathSync(mkdtempSync(join(tmpdir(), "agentd-plain-")));
    try {
      const empty = await d.get(`/projects/trust?cwd=${encodeURIComponent(plain)}`);
      expect(empty.body).to.include({ path: plain, trusted: false, hasLocalResources: false });
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
  });

  it("uses project personas, context files, rules and skills only once the project is trusted", async () => {
    expect((await d.post("/sessions", { cwd: sub, persona: "helper" })).status).to.equal(404);
    const id = await d.createSession({ cwd: sub });
    await chat(id, "hello");
    const before = systemOf(0);
    expect(before).to.contain("careful senior software engineer");
    expect(before).to.contain("GLOBAL RULE MARKER");
    expect(before).to.contain("greet: Greet people");
    for (const marker of [
      "PROJECT PERSONA MARKER",
      "AGENTS MARKER",
      "PROJECT RULE MARKER",
      "deploy",
      "OUTSIDE SECRET",
    ]) {
      expect(before).to.not.contain(marker);
    }
    expect((await d.get(`/skill-content?name=deploy&cwd=${encodeURIComponent(sub)}`)).status).to.equal(404);
    const personasBefore = (await d.get(`/personas?cwd=${encodeURIComponent(sub)}`)).body as Array<{
      name: string;
      source: string;
    }>;
    expect(personasBefore.map((p) => p.name)).to.not.include("helper");
    expect(personasBefore.find((p) => p.name === "default")?.source).to.equal("builtin");

    const trusted = await d.post("/projects/trust", { cwd: sub, trusted: true });
    expect(trusted.status).to.equal(200);
    expect(trusted.body).to.include({ path: root, trusted: true });

    await chat(id, "again");
    const after = systemOf(1);
    expect(after.startsWith("PROJECT PERSONA MARKER")).to.equal(true);
    expect(after).to.contain("AGENTS MARKER");
    expect(after).to.contain("- deploy: Deploy the app");
    expect(after.indexOf("GLOBAL RULE MARKER")).to.be.greaterThan(-1);
    expect(after.indexOf("PROJECT RULE MARKER")).to.be.greaterThan(after.indexOf("GLOBAL RULE MARKER"));
    expect(after).to.not.contain("OUTSIDE SECRET");

    const personas = (await d.get(`/personas?sessionId=${id}`)).body as Array<{ name: string; source: string }>;
    expect(personas[0]).to.deep.include({ name: "default", source: "project" });
    expect(personas.find((p) => p.name === "helper")).to.deep.equal({
      name: "helper",
      label: "Helper",
      description: "Project helper",
      source: "project",
    });
    const skill = await d.get(`/skill-content?name=deploy&cwd=${encodeURIComponent(sub)}`);
    expect(skill.body).to.deep.include({ ok: true, name: "deploy", source: "project", content: "DEPLOY SKILL BODY" });

    const helperSession = await d.post("/sessions", { cwd: sub, persona: "helper" });
    expect(helperSession.status).to.equal(201);
    await chat(helperSession.body.id, "hi helper");
    expect(systemOf(2).startsWith("HELPER MARKER")).to.equal(true);

    // Revoking trust falls back to the default persona and global resources at the next model call.
    await d.post("/projects/trust", { cwd: root, trusted: false });
    await chat(helperSession.body.id, "still there?");
    const revoked = systemOf(3);
    expect(revoked).to.contain("careful senior software engineer");
    expect(revoked).to.not.contain("HELPER MARKER");
    expect(revoked).to.not.contain("AGENTS MARKER");
  });

  it("lets the model load a skill with the skill tool only where the skill is visible", async () => {
    const id = await d.createSession({ cwd: sub });
    fake.script(tools([{ name: "skill", args: { name: "deploy" } }]), text("ok"));
    await chat(id, "deploy please");
    expect(toolResultOf(1)).to.contain('No skill named "deploy"');

    // Trusting enables the project hook too: keep it out of this test.
    rmSync(join(root, ".agentd", "hooks.json"));
    await d.post("/projects/trust", { cwd: sub, trusted: true });
    fake.script(tools([{ name: "skill", args: { name: "deploy", args: "staging" } }]), text("ok"));
    await chat(id, "deploy please");
    const loaded = toolResultOf(3);
    expect(loaded).to.contain("DEPLOY SKILL BODY");
    expect(loaded).to.contain("Apply it to: staging");
  });

  it("runs a project PreToolUse hook only after trust; exit 2 blocks the call with stderr as the reason", async () => {
    const id = await d.createSession({ cwd: sub });
    fake.script(tools([{ name: "skill", args: { name: "greet" } }]), text("ok"));
    await chat(id, "greet");
    expect(toolResultOf(1)).to.contain("GREET SKILL BODY");
    expect(() => statSync(join(root, "pre-payload.json"))).to.throw();

    await d.post("/projects/trust", { cwd: sub, trusted: true });
    fake.script(tools([{ name: "skill", args: { name: "greet" } }]), text("ok"));
    await chat(id, "greet");
    const blocked = toolResultOf(3);
    expect(blocked).to.contain("blocked by a hook: no deploys on Friday");
    expect(blocked).to.contain("permission_denied");
    expect(blocked).to.not.contain("GREET SKILL BODY");
    const payload = JSON.parse(readFileSync(join(root, "pre-payload.json"), "utf8"));
    expect(payload).to.deep.include({ hook_event_name: "PreToolUse", session_id: id, cwd: sub, tool_name: "skill" });
    expect(payload.tool_input).to.deep.equal({ name: "greet" });
    expect(readFileSync(join(root, "pre-cwd.txt"), "utf8").trim()).to.equal(root);
  });

  it("runs global hooks (plugin options) in untrusted projects; PostToolUse exit 2 adds feedback", async () => {
    const script =
      'let s="";process.stdin.on("data",(c)=>s+=c).on("end",()=>{' +
      'require("fs").writeFileSync(process.env.AGENTD_PROJECT_DIR+"/post-payload.json",s);' +
      'process.stderr.write("lint: 2 warnings");process.exit(2);});';
    await d.stop();
    d = await start({
      pluginOptions: {
        project: {
          hooks: {
            PreToolUse: [{ matcher: "*", command: ["./no-such-hook.sh"] }],
            PostToolUse: [{ matcher: "sk.*", command: [process.execPath, "-e", script] }],
          },
        },
      },
    });
    const id = await d.createSession({ cwd: sub });
    fake.script(tools([{ name: "skill", args: { name: "greet" } }]), text("ok"));
    await chat(id, "greet");
    const result = toolResultOf(1);
    expect(result).to.contain("GREET SKILL BODY");
    expect(result).to.contain("[hook feedback]\nlint: 2 warnings");
    const payload = JSON.parse(readFileSync(join(root, "post-payload.json"), "utf8"));
    expect(payload).to.deep.include({ hook_event_name: "PostToolUse", tool_name: "skill" });
    expect(payload.tool_response.content).to.contain("GREET SKILL BODY");
    // A hook that cannot run is reported on the session and does not block the call.
    const audit = await d.get(`/sessions/${id}/events/history`);
    const notices = (audit.body.events as Array<{ type: string; payload: { message?: string } }>).filter(
      (e) => e.type === "notice",
    );
    expect(notices.map((n) => n.payload.message).join("\n")).to.match(
      /PreToolUse hook "\.\/no-such-hook\.sh" could not run .*went ahead/,
    );
  });

  it("asks for trust when a session opens in an undecided project with local resources, and only then", async () => {
    const trustEvents = async (id: string) => {
      const res = await d.get(`/sessions/${id}/events/history`);
      return (res.body.events as Array<{ type: string; payload: Record<string, unknown> }>).filter(
        (e) => e.type === "project_trust_required",
      );
    };
    const id = await d.createSession({ cwd: sub });
    const events = await trustEvents(id);
    expect(events).to.have.length(1);
    expect(events[0]?.payload).to.deep.include({ path: root, cwd: sub });
    const payload = events[0]?.payload as { resources: { skills: string[] } } | undefined;
    expect(payload?.resources.skills).to.deep.equal(["deploy"]);

    const plain = realpathSync(mkdtempSync(join(tmpdir(), "agentd-plain-")));
    try {
      expect(await trustEvents(await d.createSession({ cwd: plain }))).to.have.length(0);
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
    // A decision (even "not trusted") is not asked again.
    await d.post("/projects/trust", { cwd: root, trusted: false });
    expect(await trustEvents(await d.createSession({ cwd: sub }))).to.have.length(0);
  });

  it("asks again at a session's first turn after a restart while the project is undecided", async () => {
    const id = await d.createSession({ cwd: sub });
    await d.stop();
    d = await start();
    await chat(id, "hello again");
    const res = await d.get(`/sessions/${id}/events/history`);
    const types = (res.body.events as Array<{ type: string }>).map((e) => e.type);
    expect(types.filter((t) => t === "project_trust_required")).to.have.length(2);
    await chat(id, "and again");
    const again = await d.get(`/sessions/${id}/events/history`);
    expect(
      (again.body.events as Array<{ type: string }>).filter((e) => e.type === "project_trust_required"),
    ).to.have.length(2);
  });

  it("persists trust across a restart in a private file", async () => {
    await d.post("/projects/trust", { cwd: sub, trusted: true });
    const file = join(home, "trust.json");
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    await d.stop();
    d = await start();
    const res = await d.get(`/projects/trust?cwd=${encodeURIComponent(root)}`);
    expect(res.body).to.include({ path: root, trusted: true });
    expect(res.body.decidedAt).to.be.a("string");
    const list = await d.get("/projects");
    expect(list.body).to.deep.equal([{ path: root, trusted: true, decidedAt: res.body.decidedAt }]);
    const id = await d.createSession({ cwd: sub });
    await chat(id, "hello");
    expect(systemOf(0)).to.contain("AGENTS MARKER");
  });

  it("re-scans resources on reload", async () => {
    await d.post("/projects/trust", { cwd: sub, trusted: true });
    const id = await d.createSession({ cwd: sub });
    await chat(id, "one");
    expect(systemOf(0)).to.not.contain("NEW RULE MARKER");
    write(join(root, ".agentd", "rules", "new.md"), "NEW RULE MARKER");
    expect((await d.post("/projects/reload")).body).to.deep.equal({ ok: true });
    await chat(id, "two");
    expect(systemOf(1)).to.contain("NEW RULE MARKER");
  });

  it("answers 400 to bad input", async () => {
    const missing = join(root, "does-not-exist");
    const cases: Array<[string, string, unknown?]> = [
      ["GET", "/projects/trust"],
      ["GET", `/projects/trust?cwd=${encodeURIComponent(missing)}`],
      ["GET", "/projects/trust?cwd=relative/dir"],
      ["GET", `/projects/trust?cwd=${encodeURIComponent(join(root, "AGENTS.md"))}`],
      ["POST", "/projects/trust", { trusted: true }],
      ["POST", "/projects/trust", { cwd: root }],
      ["POST", "/projects/trust", { cwd: missing, trusted: true }],
      ["POST", "/projects/trust", { cwd: root, trusted: "yes" }],
      ["POST", "/projects/trust", { cwd: root, trusted: true, extra: 1 }],
    ];
    for (const [method, path, body] of cases) {
      const res = await d.request(method, path, body);
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).to.equal(400);
      expect(res.body.error).to.be.a("string").and.not.equal("");
    }
    expect((await d.get("/projects")).body).to.deep.equal([]);
  });
});
