import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { makeTempHome, startTestDaemon } from "../testing/daemon.js";
import { HELLO_EXAMPLE as HELLO, linkDevDependencies, REPO, sh } from "./support/plugin-package.js";

const MAIN = fileURLToPath(new URL("../host/main.js", import.meta.url));

const agentd = (home: string, cwd: string, ...args: string[]) =>
  sh(process.execPath, [MAIN, "--home", home, ...args], cwd);

function json(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, "utf8"));
}

/** The dependencies of `<home>/plugins` (none when the folder was never created). */
function dependencies(home: string): Record<string, unknown> {
  const file = join(home, "plugins", "package.json");
  return existsSync(file) ? ((json(file).dependencies as Record<string, unknown> | undefined) ?? {}) : {};
}

/** The plugins installed in `<home>/plugins` (its dependencies but the link to this agentd). */
function installed(home: string): Record<string, unknown> {
  const { agentd: _self, ...plugins } = dependencies(home);
  return plugins;
}

describe("agentd plugin add / remove / list / new", () => {
  let home: string;
  let work: string;
  beforeEach(() => {
    home = makeTempHome();
    work = mkdtempSync(join(tmpdir(), "agentd-plugin-work-"));
  });
  afterEach(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it("scaffolds a plugin that passes its own test, installs it with npm, and the daemon loads it", async function () {
    this.timeout(90_000); // tsc, node --test and npm, each a process
    const created = await agentd(home, work, "plugin", "new", "demo-plugin");
    expect(created.code, created.stderr).to.equal(0);
    const dir = join(work, "demo-plugin");
    for (const f of ["package.json", "tsconfig.json", "index.ts", "index.test.ts", "README.md"]) {
      expect(existsSync(join(dir, f)), f).to.equal(true);
    }
    // What `npm install` would provide, offline: this checkout as `agentd`, and its TypeScript.
    linkDevDependencies(dir);
    const tested = await sh("npm", ["test"], dir);
    expect(tested.code, tested.stdout + tested.stderr).to.equal(0);
    expect(tested.stdout)
      .to.match(/# pass 4/)
      .and.match(/# fail 0/);

    const added = await agentd(home, work, "plugin", "add", "./demo-plugin", "--yes");
    expect(added.code, added.stderr).to.equal(0);
    expect(added.stdout).to.match(/asks for these capabilities:\n\s+routes\s+add HTTP routes/);
    expect(json(join(home, "config.json"))).to.deep.equal({
      plugins: ["demo-plugin"],
      pluginCapabilities: { "demo-plugin": ["routes"] },
    });
    expect(installed(home)).to.have.property("demo-plugin");

    const cfg = json(join(home, "config.json"));
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({ ...cfg, pluginOptions: { "demo-plugin": { greeting: "Ahoy" } } }),
    );
    const d = await startTestDaemon({ home });
    try {
      const status = (await d.get("/server/status")).body;
      const demo = status.plugins.find((p: { id: string }) => p.id === "demo-plugin");
      expect(demo).to.deep.include({ state: "active", origin: "config", capabilities: ["routes"] });
      expect((await d.get("/plugins/demo-plugin/greeting?name=Ada")).body).to.deep.equal({ greeting: "Ahoy, Ada!" });
    } finally {
      await d.stop();
    }

    const listed = await agentd(home, work, "plugin", "list", "--json");
    expect(JSON.parse(listed.stdout)).to.deep.equal([
      {
        spec: "demo-plugin",
        id: "demo-plugin",
        version: "0.1.0",
        description: "The demo-plugin agentd plugin: a greeting tool and a greeting route",
        requested: ["routes"],
        allowed: ["routes"],
      },
    ]);
    const removed = await agentd(home, work, "plugin", "remove", "demo-plugin");
    expect(removed.code, removed.stderr).to.equal(0);
    expect(json(join(home, "config.json"))).to.deep.include({ plugins: [], pluginCapabilities: {} });
    expect(installed(home)).to.not.have.property("demo-plugin");
    expect((await agentd(home, work, "plugin", "remove", "demo-plugin")).code).to.equal(1);
  });

  it("installs a packed plugin (npm pack, as published): its agentd peer is this agentd, not the registry's", async function () {
    this.timeout(90_000); // tsc, npm pack and npm install, each a process
    expect((await agentd(home, work, "plugin", "new", "packed-plugin")).code).to.equal(0);
    const dir = join(work, "packed-plugin");
    linkDevDependencies(dir);
    const built = await sh(process.execPath, [join(REPO, "node_modules", "typescript", "bin", "tsc"), "-p", "."], dir);
    expect(built.code, built.stdout + built.stderr).to.equal(0);
    const packed = await sh("npm", ["pack", "--ignore-scripts"], dir);
    expect(packed.code, packed.stderr).to.equal(0);
    expect(existsSync(join(dir, "packed-plugin-0.1.0.tgz"))).to.equal(true);

    const added = await agentd(home, dir, "plugin", "add", "./packed-plugin-0.1.0.tgz", "--yes");
    expect(added.code, added.stderr).to.equal(0);
    expect(json(join(home, "config.json"))).to.deep.equal({
      plugins: ["packed-plugin"],
      pluginCapabilities: { "packed-plugin": ["routes"] },
    });
    // A copy, not a link to the folder: the daemon runs what the tarball holds.
    expect(existsSync(join(home, "plugins", "node_modules", "packed-plugin", "dist", "index.js"))).to.equal(true);
    expect(existsSync(join(home, "plugins", "node_modules", "packed-plugin", "index.ts"))).to.equal(false);
    expect(dependencies(home)).to.have.property("agentd", `file:${REPO.endsWith("/") ? REPO : `${REPO}/`}`);

    const d = await startTestDaemon({ home });
    try {
      const status = (await d.get("/server/status")).body;
      const packedPlugin = status.plugins.find((p: { id: string }) => p.id === "packed-plugin");
      expect(packedPlugin).to.deep.include({ state: "active", origin: "config", capabilities: ["routes"] });
      expect((await d.get("/plugins/packed-plugin/greeting")).body).to.deep.equal({ greeting: "Hello, world!" });
    } finally {
      await d.stop();
    }
    expect((await agentd(home, work, "plugin", "add", "./nothing.tgz", "--yes")).stderr).to.match(/does not exist/);
  });

  it("does not enable a plugin whose capabilities were not allowed (no --yes, no terminal)", async () => {
    const res = await agentd(home, work, "plugin", "add", HELLO);
    expect(res.code).to.equal(1);
    expect(res.stdout).to.match(/routes/);
    expect(res.stderr).to.match(/Not enabled.*--yes.*routes/);
    expect(existsSync(join(home, "config.json"))).to.equal(false);
    expect(installed(home)).to.deep.equal({});
  });

  it("refuses a package without a valid manifest and uninstalls it again", async () => {
    const bad = join(work, "bad-plugin");
    mkdirSync(bad);
    writeFileSync(
      join(bad, "package.json"),
      JSON.stringify({
        name: "bad-plugin",
        version: "1.0.0",
        agentd: { id: "Bad Id", version: "1", description: "x", capabilities: ["everything"] },
      }),
    );
    const res = await agentd(home, work, "plugin", "add", bad, "--yes");
    expect(res.code).to.equal(1);
    expect(res.stderr)
      .to.match(/invalid agentd manifest/)
      .and.match(/kebab-case/)
      .and.match(/unknown capability "everything"/);
    expect(existsSync(join(home, "config.json"))).to.equal(false);
    expect(installed(home)).to.deep.equal({});
  });

  it("new refuses an invalid name and a non-empty folder", async () => {
    expect((await agentd(home, work, "plugin", "new", "Not Valid")).stderr).to.match(/not a valid plugin id/);
    mkdirSync(join(work, "taken"));
    writeFileSync(join(work, "taken", "x"), "");
    const res = await agentd(home, work, "plugin", "new", "taken");
    expect(res.code).to.equal(1);
    expect(res.stderr).to.match(/not empty/);
  });
});
