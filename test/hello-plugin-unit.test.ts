// Imported the way a third-party plugin's own tests would: through the package's `agentd/testing` export.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type PluginHarness, startPluginHarness } from "agentd/testing";
import { expect } from "chai";
import hello from "../examples/hello-plugin/index.js";

describe("the example plugin, tested with agentd/testing", () => {
  let h: PluginHarness;
  before(async () => {
    h = await startPluginHarness(hello);
  });
  after(async () => h.stop());

  it("is the plugin the README shows, and the testing snippet of the guide calls what it serves", () => {
    const read = (rel: string) => readFileSync(fileURLToPath(new URL(`../../${rel}`, import.meta.url)), "utf8");
    const readme = read("README.md");
    const shown = readme.slice(readme.indexOf("## Writing a plugin")).match(/```ts\n([\s\S]*?)```/)?.[1];
    expect(shown).to.equal(read("examples/hello-plugin/index.ts"));
    const guide = read("docs/plugins.md");
    const testing = guide.slice(guide.indexOf("## Testing a plugin")).match(/```ts\n([\s\S]*?)```/)?.[1] ?? "";
    expect(testing).to.include('h.callTool("hello", { name: "Ada" })').and.include("/plugins/hello/greeting?name=Ada");
    expect(testing).to.include('{ greeting: "Hello, Ada!" }');
  });

  it("loads through the real loader holding the capability it declares", () => {
    expect(h.status()).to.deep.include({ state: "active", capabilities: ["routes"], deniedCapabilities: [] });
    expect(h.tools.map((t) => [t.name, t.readOnly])).to.deep.equal([["hello", true]]);
  });

  it("answers its tool, and refuses arguments that do not match the schema", async () => {
    expect((await h.callTool("hello", { name: "Ada" })).content).to.equal("Hello, Ada!");
    expect((await h.callTool("hello", { name: "" })).error?.code).to.equal("invalid_arguments");
  });

  it("serves its route under /api/v1/plugins/hello, authenticated and validated", async () => {
    const res = await h.inject("GET", "/plugins/hello/greeting?name=Ada");
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ greeting: "Hello, Ada!" });
    expect((await h.inject("GET", "/plugins/hello/greeting", undefined, { auth: false })).status).to.equal(401);
    expect((await h.inject("GET", "/plugins/hello/greeting?name=")).status).to.equal(400);
  });

  it("cannot add its route when the config does not allow `routes`", async () => {
    try {
      await startPluginHarness(hello, { grant: [] });
      expect.fail("should not load");
    } catch (err) {
      expect((err as Error).message).to.match(/"routes", which the config does not allow.*pluginCapabilities\.hello/);
    }
  });
});
