import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect } from "chai";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { BUILTIN_PERSONAS } from "../plugins/personas/index.js";
import project from "../plugins/project/index.js";
import { makeTempHome, startTestDaemon, type TestDaemon } from "../testing/daemon.js";

const withProject = () =>
  [...builtinPlugins.filter((p) => p.manifest.id !== project.manifest.id), project].map(builtinSource);
const withoutProject = () => builtinPlugins.filter((p) => p.manifest.id !== project.manifest.id).map(builtinSource);

function write(file: string, content: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
}

interface PersonaRow {
  name: string;
  label: string;
  description: string;
  source: string;
}

describe("personas: built-in set and catalog routes", () => {
  let d: TestDaemon;
  let home: string;
  let cwd: string;

  beforeEach(async () => {
    home = makeTempHome();
    cwd = realpathSync(mkdtempSync(join(tmpdir(), "agentd-cwd-")));
    write(
      join(home, "personas", "reviewer.md"),
      "---\nlabel: Strict reviewer\ndescription: My own reviewer\n---\n\nGLOBAL REVIEWER PROMPT\n",
    );
    write(join(home, "personas", "poet.md"), "---\nname: poet\n---\nYou write poems.");
    write(
      join(home, "skills", "release", "SKILL.md"),
      "---\nname: release\ndescription: Cut a release\n---\n\n# Release\nSteps.",
    );
    d = await startTestDaemon({ home, builtins: withProject() });
  });
  afterEach(async () => {
    await d.cleanup();
    rmSync(cwd, { recursive: true, force: true });
  });

  it("lists personas: default first, then by label; global ones shadow built-ins", async () => {
    const res = await d.get("/personas");
    expect(res.status).to.equal(200);
    const list = res.body as PersonaRow[];
    expect(list[0]?.name).to.equal("default");
    for (const p of list) expect(Object.keys(p).sort()).to.deep.equal(["description", "label", "name", "source"]);
    const labels = list.slice(1).map((p) => p.label);
    expect(labels).to.deep.equal([...labels].sort((a, b) => a.localeCompare(b)));
    expect(list.find((p) => p.name === "reviewer")).to.deep.equal({
      name: "reviewer",
      label: "Strict reviewer",
      description: "My own reviewer",
      source: "global",
    });
    expect(list.find((p) => p.name === "poet")).to.deep.equal({
      name: "poet",
      label: "Poet",
      description: "You write poems.",
      source: "global",
    });
    expect(list.find((p) => p.name === "architect")?.source).to.equal("builtin");
  });

  it("serves persona content without frontmatter, 404 for unknown names, 400 without a name", async () => {
    const builtin = await d.get("/persona-content?name=debugger");
    expect(builtin.status).to.equal(200);
    expect(builtin.body.ok).to.equal(true);
    expect(builtin.body.content).to.equal(BUILTIN_PERSONAS.find((p) => p.name === "debugger")?.prompt);
    const global = await d.get("/persona-content?name=reviewer");
    expect(global.body).to.deep.equal({ ok: true, name: "reviewer", content: "GLOBAL REVIEWER PROMPT" });
    const unknown = await d.get("/persona-content?name=nobody");
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error).to.contain("nobody");
    expect((await d.get("/persona-content")).status).to.equal(400);
  });

  it("serves skill content, 404 for unknown skills, 400 without a name", async () => {
    const res = await d.get("/skill-content?name=release");
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      ok: true,
      name: "release",
      description: "Cut a release",
      source: "global",
      content: "# Release\nSteps.",
    });
    const unknown = await d.get("/skill-content?name=nope");
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error).to.be.a("string");
    expect((await d.get("/skill-content")).status).to.equal(400);
  });

  it("scopes to a directory or a session, and rejects a bad scope", async () => {
    write(join(cwd, ".agentd", "personas", "local.md"), "LOCAL PROMPT");
    const id = await d.createSession({ cwd });
    const untrusted = (await d.get(`/personas?sessionId=${id}`)).body as PersonaRow[];
    expect(untrusted.map((p) => p.name)).to.not.include("local");
    await d.post("/projects/trust", { cwd, trusted: true });
    await d.post("/projects/reload");
    const trusted = (await d.get(`/personas?cwd=${encodeURIComponent(cwd)}`)).body as PersonaRow[];
    expect(trusted.find((p) => p.name === "local")?.source).to.equal("project");
    expect((await d.get(`/persona-content?name=local&sessionId=${id}`)).body.content).to.equal("LOCAL PROMPT");

    expect((await d.get("/personas?sessionId=unknown-session")).status).to.equal(404);
    expect((await d.get(`/personas?cwd=${encodeURIComponent(join(cwd, "missing"))}`)).status).to.equal(400);
    expect((await d.get("/personas?cwd=relative")).status).to.equal(400);
    expect((await d.get(`/personas?cwd=${encodeURIComponent(cwd)}&sessionId=${id}`)).status).to.equal(400);
  });

  it("accepts global personas when creating a session", async () => {
    const res = await d.post("/sessions", { cwd, persona: "poet" });
    expect(res.status).to.equal(201);
    expect(res.body.session.persona).to.equal("poet");
    expect((await d.post("/sessions", { cwd, persona: "nobody" })).status).to.equal(404);
  });
});

describe("personas: without the project plugin", () => {
  it("ships real built-in prompts, with default among them", () => {
    const names = BUILTIN_PERSONAS.map((p) => p.name);
    expect(names).to.include.members(["default", "architect", "reviewer", "debugger", "docs"]);
    for (const p of BUILTIN_PERSONAS) {
      expect(p.prompt.length, p.name).to.be.greaterThan(500);
      expect(p.label).to.not.equal("");
      expect(p.description).to.not.equal("");
    }
  });

  it("lists the registry and knows no skills", async () => {
    const d = await startTestDaemon({ builtins: withoutProject() });
    try {
      write(join(d.home, "skills", "release", "SKILL.md"), "---\nname: release\n---\nSteps.");
      const list = (await d.get("/personas")).body as PersonaRow[];
      const others = BUILTIN_PERSONAS.filter((p) => p.name !== "default").sort((a, b) =>
        a.label.localeCompare(b.label),
      );
      expect(list.map((p) => p.name)).to.deep.equal(["default", ...others.map((p) => p.name)]);
      expect((await d.get("/skill-content?name=release")).status).to.equal(404);
    } finally {
      await d.cleanup();
    }
  });
});
