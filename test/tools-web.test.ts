import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import {
  silentLogger,
  type ToolContext,
  type ToolResult,
  type WebSearchRegistry,
  WebSearchRegistryToken,
} from "../core/index.js";
import webPlugin, {
  createBraveBackend,
  createSearxngBackend,
  createWebFetchTool,
  createWebSearchRegistry,
  createWebSearchTool,
} from "../plugins/tools-web/index.js";
import { makeToolContext, registerPlugin } from "../testing/plugin-harness.js";

function toolCtx(signal: AbortSignal = new AbortController().signal): ToolContext {
  return makeToolContext({ sessionId: "s-web", cwd: "/tmp", signal });
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A real HTTP server on port 0; `close` also ends connections a test left hanging (the slow route). */
async function serve(
  routes: Record<string, Handler>,
): Promise<{ base: string; requests: IncomingMessage[]; close(): Promise<void> }> {
  const requests: IncomingMessage[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req);
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const handler = routes[path];
    if (handler) return handler(req, res);
    res.writeHead(404, { "content-type": "text/plain" }).end("no such page");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const PAGE = `<!doctype html><html><head><title>Widget &amp; Co docs</title>
<style>body { color: red }</style><script>console.log("tracking")</script></head>
<body><nav><a href="/home">Home</a> | <a href="/about">About</a></nav>
<main><h1>Installing widgets</h1><p>Run <code>npm i widget</code>, then read the <a href="guide.html">guide</a>.</p>
<ul><li>fast</li><li>small</li></ul>
<table><thead><tr><th>size</th><th>speed</th></tr></thead><tbody><tr><td>1 | 2</td><td>fast</td></tr></tbody></table><pre><code>const w = widget();</code></pre>
<img src="data:image/png;base64,AAAA" alt="logo"></main>
<footer>Copyright footer text</footer></body></html>`;

function errorOf(result: ToolResult) {
  expect(result.isError, result.content).to.equal(true);
  return result.error ?? expect.fail("error details missing");
}

describe("tools-web: web_fetch", () => {
  let server: Awaited<ReturnType<typeof serve>>;
  const fetchTool = createWebFetchTool({ timeoutMs: 5_000, maxBytes: 64 * 1024 });
  const run = (args: Parameters<typeof fetchTool.execute>[0], ctx = toolCtx()) => fetchTool.execute(args, ctx);

  before(async () => {
    server = await serve({
      "/page.html": (_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE),
      "/data.json": (_req, res) =>
        res.writeHead(200, { "content-type": "application/json" }).end('{"name":"widget","tags":["a","b"]}'),
      "/notes.txt": (_req, res) =>
        res.writeHead(200, { "content-type": "text/plain" }).end("plain *text* <b>as is</b>"),
      "/r1": (_req, res) => res.writeHead(302, { location: "/r2" }).end(),
      "/r2": (_req, res) => res.writeHead(301, { location: `${server.base}/page.html` }).end(),
      "/loop": (_req, res) => res.writeHead(302, { location: "/loop" }).end(),
      "/to-file": (_req, res) => res.writeHead(302, { location: "file:///etc/passwd" }).end(),
      "/big": (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        const chunk = "x".repeat(16 * 1024);
        let sent = 0;
        const pump = () => {
          while (sent < 64 && !res.destroyed) {
            sent++;
            if (!res.write(chunk)) return res.once("drain", pump);
          }
          res.end();
        };
        res.on("close", () => {
          sent = 64;
        });
        pump();
      },
      // Headers, then nothing: only the deadline can end this fetch.
      "/slow": (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("start");
      },
      "/logo.png": (_req, res) =>
        res.writeHead(200, { "content-type": "image/png" }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0])),
      "/blob": (_req, res) =>
        res.writeHead(200, { "content-type": "application/octet-stream" }).end(Buffer.from([1, 2, 0, 0, 3, 4])),
      "/readme": (_req, res) =>
        res.writeHead(200, { "content-type": "application/octet-stream" }).end("# Readme\nhello"),
      "/boom": (_req, res) => res.writeHead(500, { "content-type": "text/plain" }).end("internal"),
    });
  });
  after(async () => server.close());

  it("converts an HTML page to markdown without scripts, styles, navigation or inline images", async () => {
    const result = await run({ url: `${server.base}/page.html` });
    expect(result.isError).to.not.equal(true);
    const text = result.content;
    expect(text).to.contain("# Widget & Co docs");
    expect(text).to.contain(`URL: ${server.base}/page.html`);
    expect(text).to.contain("# Installing widgets");
    expect(text).to.contain("Run `npm i widget`");
    expect(text).to.contain(`[guide](${server.base}/guide.html)`);
    expect(text).to.match(/^-\s+fast$/m);
    expect(text).to.contain("```\nconst w = widget();\n```");
    expect(text).to.contain("[image: logo]");
    expect(text).to.contain("| size | speed |\n| --- | --- |\n| 1 \\| 2 | fast |");
    expect(text.split("Widget & Co docs")).to.have.length(2, "the title appears once, as the heading");
    for (const noise of ["tracking", "color: red", "About", "Copyright footer", "base64"]) {
      expect(text).to.not.contain(noise);
    }
    expect(result.meta).to.include({ status: 200, redirects: 0, contentTruncated: false });
  });

  it("returns plain text or the raw HTML on request", async () => {
    const text = (await run({ url: `${server.base}/page.html`, format: "text" })).content;
    expect(text).to.contain("Installing widgets");
    expect(text).to.contain("- fast");
    expect(text).to.not.contain("# Installing");
    expect(text).to.not.contain("tracking");
    const html = (await run({ url: `${server.base}/page.html`, format: "html" })).content;
    expect(html).to.contain("<h1>Installing widgets</h1>");
  });

  it("pretty-prints JSON and passes text through", async () => {
    const json = await run({ url: `${server.base}/data.json` });
    expect(json.content).to.contain('{\n  "name": "widget",\n  "tags": [\n    "a",');
    const text = await run({ url: `${server.base}/notes.txt` });
    expect(text.content).to.contain("plain *text* <b>as is</b>");
  });

  it("follows a redirect chain and reports it", async () => {
    const result = await run({ url: `${server.base}/r1` });
    expect(result.isError).to.not.equal(true);
    expect(result.content).to.contain(`URL: ${server.base}/page.html`);
    expect(result.content).to.contain(`Redirected from: ${server.base}/r1 -> ${server.base}/r2`);
    expect(result.meta).to.include({ redirects: 2 });
  });

  it("stops after 5 redirects and refuses redirects to other schemes", async () => {
    const loop = errorOf(await run({ url: `${server.base}/loop` }));
    expect(loop.code).to.equal("execution_failed");
    // The first request and 5 followed redirects.
    expect(server.requests.filter((r) => r.url === "/loop")).to.have.length(6);
    const toFile = await run({ url: `${server.base}/to-file` });
    expect(errorOf(toFile).code).to.equal("execution_failed");
    expect(toFile.content).to.contain("file URL");
  });

  it("stops reading a body at the size cap and says so", async () => {
    const result = await run({ url: `${server.base}/big`, maxChars: 50_000 });
    expect(result.isError).to.not.equal(true);
    expect(result.meta).to.include({ bytes: 64 * 1024, bodyTruncated: true, contentTruncated: true });
    expect(result.content).to.contain("[Note: the response is larger than 64 KiB; only its first 64 KiB were read.]");
    expect(result.content).to.contain(
      "[Truncated: showing the first 50000 of 65536 characters. The rest is not shown.]",
    );
  });

  it("caps the returned text at maxChars with a hint", async () => {
    const result = await run({ url: `${server.base}/page.html`, maxChars: 100 });
    expect(result.content).to.contain("[Truncated: showing the first 100 of");
    expect(result.content).to.contain("larger maxChars");
  });

  it("times out on a server that never finishes", async () => {
    const quick = createWebFetchTool({ timeoutMs: 300 });
    const started = Date.now();
    const error = errorOf(await quick.execute({ url: `${server.base}/slow` }, toolCtx()));
    expect(error).to.include({ code: "timeout", retryable: true });
    expect(Date.now() - started).to.be.lessThan(5_000);
  });

  it("stops when the turn is aborted", async () => {
    const controller = new AbortController();
    const pending = fetchTool.execute({ url: `${server.base}/slow` }, toolCtx(controller.signal));
    controller.abort();
    expect(errorOf(await pending).code).to.equal("aborted");
  });

  it("refuses non-http schemes and invalid URLs as invalid arguments", async () => {
    for (const url of ["file:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)", "not a url"]) {
      const error = errorOf(await run({ url }));
      expect(error, url).to.include({ code: "invalid_arguments", retryable: false });
    }
  });

  it("refuses binary content, by type and by sniffing, but reads text served as octet-stream", async () => {
    const png = await run({ url: `${server.base}/logo.png` });
    expect(errorOf(png).code).to.equal("execution_failed");
    expect(png.content).to.contain("image/png, not text");
    expect(errorOf(await run({ url: `${server.base}/blob` })).code).to.equal("execution_failed");
    const readme = await run({ url: `${server.base}/readme` });
    expect(readme.isError).to.not.equal(true);
    expect(readme.content).to.contain("# Readme\nhello");
  });

  it("maps 404 to not_found and 500 to a retryable unavailable", async () => {
    const missing = errorOf(await run({ url: `${server.base}/nothing-here` }));
    expect(missing).to.include({ code: "not_found", retryable: false });
    const boom = await run({ url: `${server.base}/boom` });
    expect(errorOf(boom)).to.include({ code: "unavailable", retryable: true });
    expect(boom.content).to.contain("HTTP 500");
  });

  it("reports a refused connection as retryable unavailable", async () => {
    const closed = await serve({});
    const url = `${closed.base}/gone`;
    await closed.close();
    const result = await run({ url });
    expect(errorOf(result)).to.include({ code: "unavailable", retryable: true });
    expect(result.content).to.contain("ECONNREFUSED");
  });

  it("refuses loopback addresses only when blockPrivateNetworks is set", async () => {
    const strict = createWebFetchTool({ blockPrivateNetworks: true });
    for (const url of [`${server.base}/page.html`, "http://localhost:1/", "http://[::ffff:127.0.0.1]:1/"]) {
      const result = await strict.execute({ url }, toolCtx());
      expect(errorOf(result), url).to.include({ code: "permission_denied" });
      expect(result.content).to.contain("blockPrivateNetworks");
    }
  });
});

describe("tools-web: web_search", () => {
  let searx: Awaited<ReturnType<typeof serve>>;
  let searxStatus = 200;

  before(async () => {
    searx = await serve({
      "/search": (req, res) => {
        const url = new URL(req.url ?? "/", "http://x");
        if (searxStatus !== 200) return res.writeHead(searxStatus).end();
        const q = url.searchParams.get("q");
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            query: q,
            results: [
              { title: "Widget docs", url: "https://widget.dev/docs", content: "All about <b>widgets</b> &amp; more" },
              { title: "Widget repo", url: "https://github.com/w/widget", content: "Source code" },
              { title: "No url", content: "dropped" },
              { title: "Widget blog", url: "https://widget.dev/blog", content: "" },
            ],
          }),
        );
      },
      "/res/v1/web/search": (req, res) => {
        if (req.headers["x-subscription-token"] !== "secret-key") return res.writeHead(401).end();
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            web: { results: [{ title: "Brave hit", url: "https://b.example", description: "<strong>hit</strong>" }] },
          }),
        );
      },
    });
  });
  after(async () => searx.close());
  afterEach(() => {
    searxStatus = 200;
  });

  function searchTool(registry: WebSearchRegistry, selected?: string) {
    return createWebSearchTool({ registry, selected });
  }

  it("without a backend, answers unavailable and names the config key", async () => {
    const result = await searchTool(createWebSearchRegistry()).execute({ query: "widgets" }, toolCtx());
    expect(errorOf(result)).to.include({ code: "unavailable", retryable: false });
    expect(result.content).to.contain("pluginOptions.tools-web.search");
    expect(result.content).to.contain('"backend":"searxng"');
  });

  it("queries a SearXNG instance's JSON API and formats the results", async () => {
    const registry = createWebSearchRegistry();
    registry.add(createSearxngBackend(searx.base));
    const result = await searchTool(registry, "searxng").execute({ query: "widget docs", maxResults: 3 }, toolCtx());
    expect(result.isError, result.content).to.not.equal(true);
    expect(result.content).to.contain('Web results for "widget docs" (via searxng):');
    expect(result.content).to.contain("1. Widget docs\n   https://widget.dev/docs\n   All about widgets & more");
    expect(result.content).to.contain("2. Widget repo");
    expect(result.content).to.contain("3. Widget blog\n   https://widget.dev/blog");
    expect(result.content).to.not.contain("dropped");
    const last = searx.requests.at(-1);
    const params = new URL(last?.url ?? "", "http://x").searchParams;
    expect(params.get("q")).to.equal("widget docs");
    expect(params.get("format")).to.equal("json");
  });

  it("reports a failing backend as retryable unavailable, with SearXNG's json-format hint on 403", async () => {
    const registry = createWebSearchRegistry();
    registry.add(createSearxngBackend(`${searx.base}/search`));
    searxStatus = 403;
    const result = await searchTool(registry).execute({ query: "x" }, toolCtx());
    expect(errorOf(result)).to.include({ code: "unavailable", retryable: true });
    expect(result.content).to.contain("HTTP 403").and.to.contain("json format");
  });

  it("uses the Brave API with the key in a header and never echoes the key", async () => {
    const registry = createWebSearchRegistry();
    registry.add(createBraveBackend("secret-key", `${searx.base}/res/v1/web/search`));
    const ok = await searchTool(registry, "brave").execute({ query: "b" }, toolCtx());
    expect(ok.content).to.contain("1. Brave hit\n   https://b.example\n   hit");

    const wrong = createWebSearchRegistry();
    wrong.add(createBraveBackend("wrong-key", `${searx.base}/res/v1/web/search`));
    const denied = await searchTool(wrong, "brave").execute({ query: "b" }, toolCtx());
    expect(errorOf(denied).code).to.equal("unavailable");
    expect(denied.content).to.contain("HTTP 401").and.not.to.contain("wrong-key");
  });

  it("names the configured backend when it is not registered", async () => {
    const result = await searchTool(createWebSearchRegistry(), "kagi").execute({ query: "x" }, toolCtx());
    expect(errorOf(result).code).to.equal("unavailable");
    expect(result.content).to.contain('backend is "kagi"');
  });

  it("refuses a second backend with the same id", () => {
    const registry = createWebSearchRegistry();
    registry.add(createSearxngBackend(searx.base));
    expect(() => registry.add(createSearxngBackend(searx.base))).to.throw(/already registered/);
  });
});

describe("tools-web: plugin registration", () => {
  function register(options: Record<string, unknown>) {
    const warnings: string[] = [];
    const log = { ...silentLogger, warn: (msg: object | string) => void warnings.push(String(msg)) };
    const { tools, services } = registerPlugin(webPlugin, { options, log });
    return { tools, registry: services.get(WebSearchRegistryToken.id) as WebSearchRegistry, warnings };
  }

  it("adds both read-only tools and provides the backend registry with the configured SearXNG backend", () => {
    const { tools, registry } = register({ search: { backend: "searxng", url: "http://127.0.0.1:9/" } });
    expect(tools.map((t) => [t.name, t.readOnly])).to.deep.equal([
      ["web_fetch", true],
      ["web_search", true],
    ]);
    expect(registry.list().map((b) => b.id)).to.deep.equal(["searxng"]);
    expect(webPlugin.manifest.provides).to.deep.equal(["web-search-backends"]);
  });

  it("reports an incomplete search config on use and in the log", async () => {
    const { tools, warnings } = register({ search: { backend: "searxng" } });
    const search = tools.find((t) => t.name === "web_search") ?? expect.fail("web_search missing");
    const result = await search.execute({ query: "x" }, toolCtx());
    expect(errorOf(result).code).to.equal("unavailable");
    expect(result.content).to.contain('needs "url"');
    expect(warnings.join("\n")).to.contain('needs "url"');
  });
});
