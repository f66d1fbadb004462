import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type PluginHarness, startPluginHarness } from "agentd/testing";
import plugin from "./index.js";

// startPluginHarness runs the plugin through agentd's real loader, with the manifest of ./package.json (where
// `npm test` runs): options validated, capabilities enforced, register/start/stop called; inject() calls its
// routes through the real HTTP stack without a socket.
describe("hello", () => {
  let h: PluginHarness;
  before(async () => {
    h = await startPluginHarness(plugin, { options: { greeting: "Hi" } });
  });
  after(async () => {
    await h.stop();
  });

  it("greets with the configured greeting", async () => {
    assert.equal((await h.callTool("hello_greet", { name: "Ada" })).content, "Hi, Ada!");
  });

  it("refuses arguments that do not match the schema", async () => {
    assert.equal((await h.callTool("hello_greet", { name: "" })).error?.code, "invalid_arguments");
  });

  it("serves its greeting route, authenticated and validated", async () => {
    const res = await h.inject("GET", "/plugins/hello/greeting?name=Ada");
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { greeting: "Hi, Ada!" });
    assert.equal((await h.inject("GET", "/plugins/hello/greeting?name=")).status, 400);
    assert.equal((await h.inject("GET", "/plugins/hello/greeting", undefined, { auth: false })).status, 401);
  });

  it("cannot add its route unless the config allows the routes capability", async () => {
    await assert.rejects(startPluginHarness(plugin, { grant: [] }), /pluginCapabilities\.hello/);
  });
});
