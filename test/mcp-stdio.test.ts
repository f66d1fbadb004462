import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { PIXEL_PNG } from "./fixtures/mcp-server.js";
import { type Harness, harness, stateOf, stdio } from "./support/mcp.js";

describe("mcp plugin", () => {
  describe("stdio servers", () => {
    let h: Harness;
    const secretKey = "AGENTD_MCP_TEST_SECRET";

    before(async () => {
      process.env[secretKey] = "daemon-secret-value";
      h = harness();
      await h.manager.setGlobalServers({ fixture: stdio({ env: { FIXTURE_VAR: "from-config" } }) });
      await stateOf(h, "fixture", "connected");
    });
    after(async () => {
      delete process.env[secretKey];
      await h.manager.stop();
    });

    it("registers every tool as mcp_<server>_<tool> with the server's schema, not read-only", () => {
      const status = h.server("fixture");
      expect(status).to.deep.include({ scope: "global", transport: "stdio", state: "connected" });
      expect(status?.tools).to.include.members([
        "mcp_fixture_echo",
        "mcp_fixture_add",
        "mcp_fixture_fail",
        "mcp_fixture_slow",
        "mcp_fixture_dotted_name_tool",
      ]);
      const echo = h.tools.get("mcp_fixture_echo");
      expect(echo?.description).to.equal("[fixture] Echoes the text");
      expect(echo?.readOnly).to.equal(false);
      const schema = echo?.parameters as unknown as Record<string, unknown>;
      expect(schema.type).to.equal("object");
      expect(schema).to.not.have.property("$schema");
      expect(schema.properties).to.have.property("text");
      expect(schema.required).to.deep.equal(["text"]);
    });

    it("calls tools and maps their results", async () => {
      expect((await h.call("mcp_fixture_echo", { text: "hello" })).content).to.equal("hello");
      const sum = await h.call("mcp_fixture_add", { a: 2, b: 3 });
      expect(sum).to.deep.include({ content: "5" });
      expect(sum.isError).to.equal(undefined);
      const pic = await h.call("mcp_fixture_picture");
      expect(pic.content).to.equal('a pixel\n[image image/png]\n[resource link file:///pixel.png "pixel"]');
      expect(pic.images?.[0]?.dataUrl).to.equal(`data:image/png;base64,${PIXEL_PNG}`);
    });

    it("maps an isError result to execution_failed", async () => {
      const r = await h.call("mcp_fixture_fail");
      expect(r.isError).to.equal(true);
      expect(r.content).to.contain("boom: the fixture failed on purpose");
      expect(r.error).to.deep.include({ code: "execution_failed", retryable: false });
      expect(r.error?.suggestedFix).to.be.a("string").and.not.empty;
    });

    it("passes only safe defaults plus the entry's env to the server process", async () => {
      expect((await h.call("mcp_fixture_env", { name: "FIXTURE_VAR" })).content).to.equal("from-config");
      expect((await h.call("mcp_fixture_env", { name: secretKey })).content).to.equal("(unset)");
      expect((await h.call("mcp_fixture_env", { name: "PATH" })).content).to.equal(process.env.PATH);
    });

    it("returns promptly with an aborted result when the call is aborted, and the server stays usable", async () => {
      const ac = new AbortController();
      const started = Date.now();
      const pending = h.call("mcp_fixture_slow", { ms: 30_000 }, ac.signal);
      setTimeout(() => ac.abort(), 100);
      const r = await pending;
      expect(Date.now() - started).to.be.lessThan(10_000);
      expect(r.error).to.deep.include({ code: "aborted", retryable: false });
      expect(h.server("fixture")?.state).to.equal("connected");
      expect((await h.call("mcp_fixture_echo", { text: "still here" })).content).to.equal("still here");
    });

    it("refreshes the tool list on tools/list_changed", async () => {
      await h.call("mcp_fixture_add_tool", { name: "late" });
      await h.until("the new tool", () => h.server("fixture")?.tools.includes("mcp_fixture_late") ?? false);
      expect((await h.call("mcp_fixture_late")).content).to.equal("late ran");
      expect(h.tools.has("mcp_fixture_echo")).to.equal(true);
    });
  });

  describe("failures", () => {
    let h: Harness;
    afterEach(async () => h.manager.stop());

    it("reports a missing command as failed while other servers work", async () => {
      h = harness();
      await h.manager.setGlobalServers({ ok: stdio(), broken: { command: "/nonexistent/agentd-mcp-nope" } });
      await h.manager.whenSettled();
      expect(h.server("broken")).to.deep.include({ state: "failed", tools: [] });
      expect(h.server("broken")?.error).to.match(/could not connect: .*ENOENT/);
      expect(h.server("ok")?.state).to.equal("connected");
      expect((await h.call("mcp_ok_echo", { text: "x" })).content).to.equal("x");
    });

    it("lists invalid and disabled entries without connecting them", async () => {
      h = harness();
      await h.manager.setGlobalServers({ ok: stdio(), bad: { url: "nope" }, off: stdio({ disabled: true }) });
      await stateOf(h, "ok", "connected");
      expect(h.server("bad")).to.deep.include({ state: "failed", transport: "http", tools: [] });
      expect(h.server("bad")?.error).to.match(/^invalid configuration: url must start with/);
      expect(h.server("off")).to.deep.include({ state: "disabled", tools: [] });
    });

    it("times out a call after the server's timeoutMs", async () => {
      h = harness();
      await h.manager.setGlobalServers({ t: stdio({ timeoutMs: 300 }) });
      await stateOf(h, "t", "connected");
      const r = await h.call("mcp_t_slow", { ms: 10_000 });
      expect(r.error).to.deep.include({ code: "timeout", retryable: true });
      expect(r.content).to.contain("300 ms");
    });

    it("returns unavailable when the server dies, then reconnects with the same tool names", async () => {
      h = harness();
      await h.manager.setGlobalServers({ c: stdio() });
      await stateOf(h, "c", "connected");
      const before = h.server("c")?.tools;
      const r = await h.call("mcp_c_crash");
      expect(r.error).to.deep.include({ code: "unavailable", retryable: true });
      await stateOf(h, "c", "connected");
      expect(h.server("c")?.tools).to.deep.equal(before);
      expect((await h.call("mcp_c_echo", { text: "back" })).content).to.equal("back");
    });

    it("removes the tools of a server that stays down after bounded retries", async () => {
      const dir = mkdtempSync(join(tmpdir(), "agentd-mcp-once-"));
      h = harness();
      try {
        await h.manager.setGlobalServers({ once: stdio({ env: { MCP_FIXTURE_ONCE: join(dir, "marker") } }) });
        await stateOf(h, "once", "connected");
        const during = h.until("reconnecting", () => /reconnecting/.test(h.server("once")?.error ?? ""));
        await h.call("mcp_once_crash");
        await during;
        await h.until("final failure", () => h.server("once")?.state === "failed" && !h.server("once")?.tools.length);
        expect(h.server("once")?.error).to.match(/refusing to start a second time/);
        expect(h.tools.list().filter((t) => t.name.startsWith("mcp_once_"))).to.deep.equal([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("dedupes tool names of servers whose names sanitise alike", async () => {
      h = harness();
      await h.manager.setGlobalServers({ "a.b": stdio(), a_b: stdio() });
      await h.until("both connected", (l) => l.every((s) => s.state === "connected"));
      expect([...h.server("a.b")!.tools, ...h.server("a_b")!.tools]).to.include.members([
        "mcp_a_b_echo",
        "mcp_a_b_echo_2",
      ]);
    });
  });
});
