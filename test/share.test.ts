import { createHash } from "node:crypto";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { SessionStoreToken } from "../core/store.js";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import sharePlugin, { pathRedactor } from "../plugins/share/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";

const PNG =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

function builtins() {
  return [...builtinPlugins.filter((p) => p.manifest.id !== sharePlugin.manifest.id), sharePlugin].map(builtinSource);
}

describe("share plugin: the public page of a shared session", () => {
  let d: TestDaemon;
  let cwd: string;
  let id: string;

  const start = (config: Record<string, unknown> = {}) => startTestDaemon({ builtins: builtins(), config });

  /** A session with a system prompt, hostile user text, an image, reasoning, a tool call and its result. */
  async function seed(): Promise<void> {
    id = await d.createSession({ cwd, title: 'Fix <b>bug</b> & "quotes"' });
    const store = d.daemon.services.get(SessionStoreToken);
    store.appendMessage(id, { role: "system", content: "SYSTEM PROMPT SECRET" });
    store.appendMessage(id, {
      role: "user",
      content: [
        { type: "text", text: `<script>alert('x')</script> look at ${cwd}/src/a.ts` },
        { type: "image_url", image_url: { url: PNG } },
      ],
    });
    store.appendMessage(id, {
      role: "assistant",
      content: null,
      thinking: "thinking about <i>it</i>",
      toolCalls: [{ id: "c1", name: "read", arguments: JSON.stringify({ path: `${cwd}/src/a.ts` }) }],
    });
    store.appendMessage(id, {
      role: "tool",
      toolCallId: "c1",
      toolName: "read",
      content: "</pre><script>evil()</script>",
      meta: { isError: false },
    });
    store.appendMessage(id, { role: "assistant", content: "Done: <img src=x onerror=alert(1)>" });
  }

  beforeEach(async () => {
    cwd = realpathSync(mkdtempSync(join(tmpdir(), "agentd-share-")));
    d = await start();
    await seed();
  });
  afterEach(async () => {
    await d.cleanup();
    rmSync(cwd, { recursive: true, force: true });
  });

  it("serves an escaped page without auth, under a strict CSP (no script but its own local-time one)", async () => {
    const share = await d.post(`/sessions/${id}/share`, { toolResults: true });
    expect(share.status).to.equal(200);
    expect(share.body.url).to.equal(`/shared/${share.body.token}`); // the link the API returns is the page
    const res = await d.get(`${d.baseUrl}${share.body.url}`, { auth: false });
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-type")).to.match(/^text\/html/);
    expect(res.headers.get("cache-control")).to.equal("no-store");
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).to.include("default-src 'none'").and.include("frame-ancestors 'none'").and.include("img-src data:");
    expect(csp).to.not.include("unsafe");
    const style = /<style>([\s\S]*?)<\/style>/.exec(res.text)?.[1] ?? expect.fail("no style");
    expect(csp).to.include(`'sha256-${createHash("sha256").update(style).digest("base64")}'`);

    const html = res.text;
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/gi)].map((m) => m[1] as string);
    expect(scripts).to.have.length(1);
    expect(html.match(/<script/gi)).to.have.length(1);
    expect(csp).to.include(
      `script-src 'sha256-${createHash("sha256")
        .update(scripts[0] as string)
        .digest("base64")}'`,
    );
    expect(html).to.not.include("<img src=x");
    expect(html).to.include("&#60;script&#62;alert(&#39;x&#39;)&#60;/script&#62;");
    expect(html).to.include("&#60;/pre&#62;&#60;script&#62;evil()&#60;/script&#62;");
    expect(html).to.include("Fix &#60;b&#62;bug&#60;/b&#62; &#38; &#34;quotes&#34;");
    expect(html).to.include("thinking about &#60;i&#62;it&#60;/i&#62;");
    expect(html).to.not.include("SYSTEM PROMPT SECRET");
    expect(html).to.not.include(cwd);
    expect(html).to.include("&#60;project&#62;/src/a.ts");
    expect(html).to.include(`<img alt="attached image" src="${PNG}">`);
    expect(html).to.not.include("/api/v1/sessions");
    expect(html).to.not.include(d.info.token);
  });

  it("answers 404 once revoked, for unknown and malformed tokens; a new share gets a new token", async () => {
    const first = (await d.post(`/sessions/${id}/share`)).body.token as string;
    expect((await d.get(`${d.baseUrl}/shared/${first}`, { auth: false })).status).to.equal(200);
    expect((await d.delete(`/sessions/${id}/share`)).body).to.deep.equal({ ok: true });

    const revoked = await d.get(`${d.baseUrl}/shared/${first}`, { auth: false });
    expect(revoked.status).to.equal(404);
    expect(revoked.body.error).to.be.a("string");
    expect((await d.get(`${d.baseUrl}/shared/${first}`)).status).to.equal(404);
    for (const bad of ["abc", "A".repeat(32), encodeURIComponent("<script>alert(1)</script>"), `${first}x`]) {
      const res = await d.get(`${d.baseUrl}/shared/${bad}`, { auth: false });
      expect(res.status, bad).to.equal(404);
      expect(res.body.error, bad).to.be.a("string");
    }

    const second = (await d.post(`/sessions/${id}/share`)).body.token as string;
    expect(second).to.not.equal(first);
    expect((await d.get(`${d.baseUrl}/shared/${second}`, { auth: false })).status).to.equal(200);
    expect((await d.get(`${d.baseUrl}/shared/${first}`, { auth: false })).status).to.equal(404);
  });

  it("keeps the rest of the API private", async () => {
    const token = (await d.post(`/sessions/${id}/share`)).body.token as string;
    expect((await d.get(`/sessions/${id}`, { auth: false })).status).to.equal(401);
    expect((await d.get(`/sessions/${id}/image?seq=2&idx=0`, { auth: false })).status).to.equal(401);
    const doc = await d.get("/openapi.json", { auth: false });
    // A browser page, not an API resource: outside /api/v1 and not in the interface description.
    expect(Object.keys(doc.body.paths).filter((p) => p.includes("shared"))).to.deep.equal([]);
    expect((await d.get(`${d.api}/shared/${token}`, { auth: false })).status).to.equal(404);
    expect(token).to.have.length(32);
  });

  it("leaves tool results out unless the one sharing chooses them; the preview shows either, signed in only", async () => {
    const token = (await d.post(`/sessions/${id}/share`)).body.token as string;
    const page = async () => (await d.get(`${d.baseUrl}/shared/${token}`, { auth: false })).text;
    expect(await page())
      .to.include("[result not shared]")
      .and.not.include("evil()");
    expect((await d.get(`/sessions/${id}`)).body.shareToolResults).to.equal(false);
    // Choosing them for the link that exists changes what it shows; the token stays.
    expect((await d.post(`/sessions/${id}/share`, { toolResults: true })).body.token).to.equal(token);
    expect(await page()).to.include("evil()");
    expect((await d.get(`/sessions/${id}`)).body.shareToolResults).to.equal(true);
    expect((await d.post(`/sessions/${id}/share`, { toolResults: "yes" })).status).to.equal(400);

    const preview = await d.get(`/sessions/${id}/share-preview`);
    expect(preview.status).to.equal(200);
    expect(preview.text).to.include("Preview: this is what the link will show").and.include("[result not shared]");
    expect(preview.headers.get("content-security-policy")).to.include("frame-ancestors 'self'");
    expect((await d.get(`/sessions/${id}/share-preview?toolResults=1`)).text).to.include("evil()");
    expect((await d.get(`/sessions/${id}/share-preview`, { auth: false })).status).to.equal(401);
    expect((await d.get(`/sessions/nope/share-preview`)).status).to.equal(404);
  });

  it("renders the agent's Markdown (headings, emphasis, tables, code) safely, and times as <time>", async () => {
    const store = d.daemon.services.get(SessionStoreToken);
    await store.appendMessage(id, {
      role: "assistant",
      content:
        "## Summary\n\nThis is **bold** and `code`.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n" +
        "[ok](https://example.com) [bad](javascript:alert(1)) ![x](https://tracker.example/p.png)\n\n```ts\nconst a = 1 < 2;\n```",
    });
    const token = (await d.post(`/sessions/${id}/share`)).body.token as string;
    const html = (await d.get(`${d.baseUrl}/shared/${token}`, { auth: false })).text;
    expect(html).to.include("<h2>Summary</h2>").and.include("<strong>bold</strong>").and.include("<code>code</code>");
    expect(html).to.include("<table>").and.include("<td>1</td>");
    expect(html).to.not.include("## Summary").and.not.include("**bold**");
    expect(html).to.include('<a href="https://example.com" rel="noopener noreferrer nofollow">ok</a>');
    expect(html).to.not.include("javascript:").and.not.include("tracker.example");
    expect(html).to.include("const a = 1 &lt; 2;");
    expect(html).to.match(/<time datetime="\d{4}-\d\d-\d\dT[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>/);
  });

  it("can leave tool results out (pluginOptions.share.toolResults = false)", async () => {
    await d.cleanup();
    d = await start({ pluginOptions: { share: { toolResults: false } } });
    await seed();
    const token = (await d.post(`/sessions/${id}/share`, { toolResults: true })).body.token as string;
    const html = (await d.get(`${d.baseUrl}/shared/${token}`, { auth: false })).text;
    expect(html).to.include("[result not shared]");
    expect(html).to.not.include("evil()");
    expect(html).to.include("Done: &#60;img src=x onerror=alert(1)&#62;");
  });
});

describe("share plugin: path redaction", () => {
  it("shortens the session directory and the home directory", () => {
    const r = pathRedactor("/home/ann/proj", "/home/ann");
    expect(r("/home/ann/proj/src/a.ts and /home/ann/.ssh/id")).to.equal("<project>/src/a.ts and ~/.ssh/id");
    expect(pathRedactor("/", "/")("/etc/passwd")).to.equal("/etc/passwd");
  });
});
