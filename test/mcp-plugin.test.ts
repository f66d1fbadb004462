import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { expect } from "chai";
import {
  McpManagerToken,
  type McpServerStatus,
  type ProjectTrust,
  type RouteRequest,
  toDisposable,
} from "../core/index.js";
import mcpPlugin, { type McpManager } from "../plugins/mcp/index.js";
import { createFixtureServer } from "./fixtures/mcp-server.js";
import { fakeContext, type Harness, harness, stateOf, stdio } from "./support/mcp.js";

describe("mcp plugin", () => {
  describe("streamable HTTP servers", () => {
    let http: Server;
    let url: string;
    let h: Harness;

    before(async () => {
      http = createServer((req, res) => {
        if (req.headers.authorization !== "Bearer test-token-123") {
          res.writeHead(401, { "content-type": "text/plain" }).end("unauthorized");
          return;
        }
        // Stateless: a fresh server and transport per request.
        const server = createFixtureServer({ stdio: false });
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on("close", () => {
          void transport.close();
          void server.close();
        });
        server
          .connect(transport)
          .then(() => transport.handleRequest(req, res))
          .catch(() => res.destroy());
      });
      await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
      url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    });
    after(async () => {
      await h?.manager.stop();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    });

    it("connects with the configured headers and calls tools; a refused server fails without leaking headers", async () => {
      h = harness();
      await h.manager.setGlobalServers({
        web: { url, headers: { Authorization: "Bearer test-token-123" } },
        wrong: { url, headers: { Authorization: "Bearer wrong-token-456" } },
      });
      await h.manager.whenSettled();
      expect(h.server("web")).to.deep.include({ transport: "http", state: "connected" });
      expect((await h.call("mcp_web_echo", { text: "over http" })).content).to.equal("over http");
      expect((await h.call("mcp_web_add", { a: 40, b: 2 })).content).to.equal("42");
      expect(h.server("wrong")?.state).to.equal("failed");
      expect(h.server("wrong")?.error).to.be.a("string").and.not.contain("wrong-token-456");
    });
  });

  describe("project servers", () => {
    let root: string;
    let h: Harness;
    const trusted = new Set<string>();
    const trust: ProjectTrust = {
      projectRoot: (cwd) => cwd,
      isTrusted: (cwd) => trusted.has(cwd),
      list: () => [],
      pins: () => undefined,
      set: () => {
        throw new Error("not used");
      },
      onChange: () => toDisposable(() => {}),
    };

    beforeEach(() => {
      root = mkdtempSync(join(tmpdir(), "agentd-mcp-proj-"));
      mkdirSync(join(root, ".agentd"));
      writeFileSync(join(root, ".agentd", "mcp.json"), JSON.stringify({ mcpServers: { proj: stdio() } }));
      h = harness({ trust: () => trust });
    });
    afterEach(async () => {
      trusted.clear();
      await h.manager.stop();
      rmSync(root, { recursive: true, force: true });
    });

    it("connects a trusted project's servers only, and closes them when forgotten", async () => {
      expect(h.manager.ensureProject(root)).to.deep.equal([]);
      expect(h.manager.list()).to.deep.equal([]);
      trusted.add(root);
      const started = h.manager.ensureProject(root);
      expect(started.map((s) => [s.name, s.scope, s.project])).to.deep.equal([["proj", "project", root]]);
      await stateOf(h, "proj", "connected", root);
      expect(h.manager.ensureProject(root)[0]?.state).to.equal("connected");
      expect((await h.call("mcp_proj_echo", { text: "p" })).content).to.equal("p");
      await h.manager.forgetProject(root);
      expect(h.manager.list()).to.deep.equal([]);
      expect(h.tools.has("mcp_proj_echo")).to.equal(false);
    });
  });

  describe("plugin", () => {
    it("does not wait for connections in start, serves GET /mcp/servers and closes servers in stop", async () => {
      const { ctx, tools, routes, services } = fakeContext({
        mcpServers: { slowpoke: stdio({ env: { MCP_FIXTURE_DELAY_MS: "500" } }) },
      });
      mcpPlugin.register(ctx);
      const manager = services.get(McpManagerToken.id) as McpManager;
      await mcpPlugin.start?.(ctx);
      // start has returned while the server is still in its handshake.
      expect(manager.list().map((s) => s.state)).to.deep.equal(["connecting"]);
      await new Promise<void>((resolve) => {
        const sub = manager.onChange(() => {
          if (manager.list()[0]?.state !== "connected") return;
          sub.dispose();
          resolve();
        });
      });
      expect(tools.has("mcp_slowpoke_echo")).to.equal(true);
      const route = routes.get("GET /mcp/servers");
      const res = await route?.handler({} as RouteRequest);
      expect((res as { body: McpServerStatus[] }).body[0]).to.deep.include({ name: "slowpoke", state: "connected" });
      await mcpPlugin.stop?.(ctx);
      expect(manager.list()).to.deep.equal([]);
      expect(tools.list()).to.deep.equal([]);
    });
  });
});
