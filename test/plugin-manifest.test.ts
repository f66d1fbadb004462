import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { ToolRegistryToken } from "../core/registries.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { makeToolContext } from "../testing/plugin-harness.js";

const PACKAGE_MANIFEST = {
  version: "2.0.0",
  description: "from package.json",
  capabilities: ["routes"],
};

/**
 * A third-party plugin package in plain JavaScript: package.json with the `agentd` manifest, and an entry module whose
 * default export is `code` (source text of an object literal) plus a `greet` tool that reads its options.
 */
function writePlugin(root: string, id: string, code: string, manifest: object = PACKAGE_MANIFEST): string {
  const dir = join(root, id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: id, type: "module", main: "index.js", agentd: { id, ...manifest } }),
  );
  writeFileSync(
    join(dir, "index.js"),
    `export default {
  ${code}
  register(ctx) {
    ctx.tools.add({
      name: ${JSON.stringify(`${id.replace(/-/g, "_")}_greet`)},
      description: "greets",
      parameters: { type: "object", properties: {} },
      async execute() {
        return { content: ctx.manifest.version + " " + (ctx.options.greeting ?? "none") };
      },
    });
  },
};
`,
  );
  return dir;
}

const OPTIONS = `{ type: "object", properties: { greeting: { type: "string", default: "Hello", maxLength: 5 } } }`;

describe("a third-party plugin's manifest lives in its package.json", () => {
  let root: string;
  let d: TestDaemon;
  const plugins: Record<string, string> = {};
  before(async () => {
    root = mkdtempSync(join(tmpdir(), "agentd-manifest-"));
    // The new form: no manifest in the code, the options schema as `options`.
    plugins.bare = writePlugin(root, "bare", `options: ${OPTIONS},`);
    plugins.badOptions = writePlugin(root, "bad-options", `options: ${OPTIONS},`);
    // The old form: the manifest repeated in the code (the options schema only there), matching package.json.
    plugins.repeated = writePlugin(
      root,
      "repeated",
      `manifest: { id: "repeated", version: "2.0.0", description: "from package.json", capabilities: ["routes"],
    configSchema: ${OPTIONS} },`,
    );
    // The code states another version and more capabilities than package.json.
    plugins.differs = writePlugin(
      root,
      "differs",
      `manifest: { id: "differs", version: "2.0.1", description: "from package.json", capabilities: ["routes", "storage"] },`,
    );
    // The code states only some fields (not its capabilities): what it leaves out it does not contradict.
    plugins.partial = writePlugin(root, "partial", `manifest: { id: "partial", version: "2.0.0" },`);
    // package.json states no description, the code does: no contradiction, and package.json's manifest holds.
    plugins.pkgPartial = writePlugin(
      root,
      "pkg-partial",
      `manifest: { id: "pkg-partial", version: "2.0.0", description: "in the code only", capabilities: ["routes"] },`,
      { version: "2.0.0", capabilities: ["routes"] },
    );
    plugins.otherId = writePlugin(
      root,
      "other-id",
      `manifest: { id: "someone-else", version: "2.0.0", description: "from package.json", capabilities: ["routes"] },`,
    );
    plugins.schemaDiffers = writePlugin(root, "schema-differs", `options: ${OPTIONS},`, {
      ...PACKAGE_MANIFEST,
      configSchema: { type: "object", properties: { greeting: { type: "string" } } },
    });
    // A dependency its code declares (`deps`), which no plugin provides: package.json does not list it.
    plugins.needsService = writePlugin(
      root,
      "needs-service",
      `deps: { missing: { id: "no-such-service", symbol: Symbol.for("agentd:no-such-service") } },`,
    );
    const ids = [
      "bare",
      "bad-options",
      "repeated",
      "partial",
      "differs",
      "other-id",
      "schema-differs",
      "needs-service",
    ];
    d = await startTestDaemon({
      config: {
        plugins: Object.values(plugins),
        pluginCapabilities: Object.fromEntries(ids.map((id) => [id, ["routes"]])),
        pluginOptions: { bare: { greeting: "Hi" }, "bad-options": { greeting: "Too long" } },
      },
    });
  });
  after(async () => {
    await d?.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  async function status(id: string) {
    const all = (await d.get("/server/status")).body.plugins as Array<Record<string, unknown>>;
    return all.find((p) => p.id === id);
  }

  async function callGreet(id: string): Promise<string | undefined> {
    const tool = d.daemon.services.get(ToolRegistryToken).get(`${id.replace(/-/g, "_")}_greet`);
    return (await tool?.execute({}, makeToolContext()))?.content;
  }

  it("loads a plugin whose code states no manifest, with package.json's, and its options schema from the code", async () => {
    expect(await status("bare")).to.deep.include({
      state: "active",
      version: "2.0.0",
      description: "from package.json",
      capabilities: ["routes"],
    });
    expect(await callGreet("bare")).to.equal("2.0.0 Hi");
  });

  it("validates the options against the code's schema: invalid ones keep the plugin out, naming the key", async () => {
    const s = await status("bad-options");
    expect(s).to.include({ state: "failed" });
    expect(s?.error).to.match(/pluginOptions\.bad-options\.greeting/);
  });

  it("still loads a plugin that repeats its manifest in the code where the fields both state match", async () => {
    expect(await status("repeated")).to.deep.include({ state: "active", version: "2.0.0" });
    expect(await callGreet("repeated")).to.equal("2.0.0 Hello");
    expect(await status("partial")).to.deep.include({ state: "active", capabilities: ["routes"] });
    expect(await status("pkg-partial")).to.deep.include({ state: "active", description: "" });
  });

  it("refuses a manifest in the code that differs from package.json, naming the fields; the daemon goes on", async () => {
    const s = await status("differs");
    expect(s).to.include({ state: "failed" });
    expect(s?.error)
      .to.match(/differs from package\.json's "agentd" key/)
      .and.match(/version \("2\.0\.1" in the code, "2\.0\.0" there\)/)
      .and.match(/capabilities \(\["routes","storage"\] in the code, \["routes"\] there\)/)
      .and.not.match(/description/);
    expect((await status("other-id"))?.error).to.match(/id \("someone-else" in the code, "other-id" there\)/);
    expect((await status("schema-differs"))?.error).to.match(/in configSchema/);
    expect(await callGreet("differs")).to.equal(undefined);
    expect(await status("bare")).to.include({ state: "active" });
  });

  it("requires what its code's deps require, though package.json does not list it", async () => {
    const s = await status("needs-service");
    expect(s).to.include({ state: "failed" });
    expect(s?.error).to.match(/requires "no-such-service", which no loaded plugin provides/);
  });
});
