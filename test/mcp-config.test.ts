import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { toDisposable } from "../core/index.js";
import { loadProjectServers, parseServers } from "../plugins/mcp/index.js";
import { mapCallResult } from "../plugins/mcp/results.js";
import { ToolNames, toolName } from "../plugins/mcp/tool-names.js";
import { PIXEL_PNG } from "./fixtures/mcp-server.js";

describe("mcp plugin", () => {
  describe("config", () => {
    it("accepts stdio and http entries and reports each invalid one with a reason", () => {
      const parsed = parseServers(
        {
          ok: { command: "node", args: ["x.js"], env: { A: "1" }, cwd: "sub", alwaysAllow: ["x"] },
          web: { url: "https://example.test/mcp", headers: { Authorization: "Bearer x" }, timeoutMs: 5000 },
          numeric: { command: 42 },
          ftp: { url: "ftp://example.test" },
          empty: {},
          sse: { type: "sse" },
          both: { command: "x", url: "http://x" },
          text: "node server.js",
          badEnv: { command: "x", env: { A: 1 } },
        },
        "/base",
      );
      const byName = new Map(parsed.servers.map((s) => [s.name, s]));
      expect(byName.get("ok")?.config).to.deep.include({ transport: "stdio", command: "node", cwd: "/base/sub" });
      expect(byName.get("web")?.config).to.deep.include({ transport: "http", timeoutMs: 5000 });
      expect(byName.get("numeric")?.invalid).to.match(/command must be string/);
      expect(byName.get("ftp")?.invalid).to.equal("url must start with http:// or https://");
      expect(byName.get("empty")?.invalid).to.match(/needs command \(stdio\) or url \(http\)/);
      expect(byName.get("sse")?.invalid).to.match(/legacy SSE/);
      expect(byName.get("both")?.invalid).to.match(/not both/);
      expect(byName.get("text")?.invalid).to.match(/must be an object/);
      expect(byName.get("badEnv")?.invalid).to.match(/env\.A must be string/);
      expect(parseServers([1, 2], "/").error).to.match(/must be an object/);
    });

    it("loads project servers from .agentd/mcp.json and reports a malformed file", () => {
      const root = mkdtempSync(join(tmpdir(), "agentd-mcp-project-"));
      try {
        expect(loadProjectServers(root)).to.deep.equal({ servers: [] });
        mkdirSync(join(root, ".agentd"));
        writeFileSync(join(root, ".agentd", "mcp.json"), "{ not json");
        expect(loadProjectServers(root).error).to.match(/not valid JSON/);
        writeFileSync(
          join(root, ".agentd", "mcp.json"),
          JSON.stringify({ mcpServers: { p: { command: "x", cwd: "." } } }),
        );
        expect(loadProjectServers(root).servers[0]?.config).to.deep.include({ command: "x", cwd: root });
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  });

  describe("naming and results", () => {
    it("sanitises names to [a-zA-Z0-9_-], caps them at 64 characters and dedupes collisions", () => {
      expect(toolName("my.server", "get weather/now")).to.equal("mcp_my_server_get_weather_now");
      const names = new ToolNames();
      const taken = new Set(["mcp_x_t"]);
      const add = (n: string) => {
        if (taken.has(n)) throw new Error(`tool "${n}" is already contributed`);
        taken.add(n);
        return toDisposable(() => taken.delete(n));
      };
      expect(names.register("x", "t", add).name).to.equal("mcp_x_t_2");
      const long = "s".repeat(80);
      const first = names.register(long, "tool", add);
      const second = names.register(long, "tool", add);
      expect(first.name).to.have.length(64);
      expect(second.name).to.have.length(64).and.match(/_2$/);
      second.dispose();
      expect(names.register(long, "tool", add).name).to.equal(second.name);
    });

    it("maps content parts: text joined, images as data URLs, other parts summarised", () => {
      const r = mapCallResult(
        {
          content: [
            { type: "text", text: "one" },
            { type: "image", data: PIXEL_PNG, mimeType: "image/png" },
            { type: "audio", data: "AAAA", mimeType: "audio/wav" },
            { type: "resource", resource: { uri: "file:///a.txt", text: "inside" } },
            { type: "resource", resource: { uri: "file:///b.bin", blob: "AAAA", mimeType: "application/zip" } },
          ],
        },
        { server: "s", tool: "t" },
      );
      expect(r.isError).to.equal(undefined);
      expect(r.content).to.equal(
        "one\n[image image/png]\n[audio audio/wav, 3 bytes]\n[resource file:///a.txt]\ninside\n" +
          "[resource file:///b.bin (application/zip, 3 bytes)]",
      );
      expect(r.images).to.deep.equal([{ dataUrl: `data:image/png;base64,${PIXEL_PNG}` }]);
      expect(mapCallResult({ content: [], structuredContent: { n: 1 } }, { server: "s", tool: "t" }).content).to.equal(
        '{"n":1}',
      );
    });
  });
});
