import { execFile } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "chai";
import type { Browser } from "playwright-core";
import { loginLink, mintLoginCode } from "../host/http/auth.js";
import { launchBrowser, signIn } from "./support/browser.js";
import { makeTempHome, spawnDaemon, startTestDaemon, type TestDaemon } from "./support/daemon.js";

/** A page on another origin that posts a token form to the daemon, with no referrer (so Chromium sends Origin: null). */
function attackerSite(target: string, token: string): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html", "referrer-policy": "no-referrer" });
    res.end(`<!doctype html><form method="post" action="${target}/login"><input name="token" value="${token}">
<button type="submit">Go</button></form>`);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

describe("web sign-in in a real browser (headless Chromium)", function () {
  this.timeout(60_000);
  let d: TestDaemon;
  let browser: Browser;

  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    d = await startTestDaemon();
  });
  afterEach(async () => {
    await d?.cleanup();
  });

  it("the /login form signs in (Chromium posts it with Origin: null and Sec-Fetch-Site: same-origin)", async () => {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    const posted = page.waitForRequest((r) => r.method() === "POST" && r.url().endsWith("/login"));
    await signIn(page, d.baseUrl, d.token);
    const headers = await (await posted).allHeaders();
    expect(headers.origin).to.equal("null");
    expect(new URL(page.url()).pathname).to.equal("/");
    const cookies = await ctx.cookies();
    expect(cookies.map((c) => c.name)).to.include("agentd_session");
    // The UI's own API calls pass too.
    const status = await page.evaluate(async () => (await fetch("/api/v1/config")).status);
    expect(status).to.equal(200);
    await ctx.close();
  });

  it("a genuinely cross-site form post is still refused, from another site and from another port", async () => {
    for (const [attackerHost, label] of [
      ["localhost", "cross-site (another host name)"],
      ["127.0.0.1", "same-site but cross-origin (another port)"],
    ] as const) {
      const site = await attackerSite(d.baseUrl, d.token);
      const ctx = await browser.newContext();
      const page = await ctx.newPage();
      try {
        await page.goto(`http://${attackerHost}:${(site.address() as AddressInfo).port}/`);
        const answer = page.waitForResponse((r) => r.url().startsWith(`${d.baseUrl}/login`));
        await page.getByRole("button", { name: "Go" }).click();
        const res = await answer;
        expect(res.status(), label).to.equal(403);
        expect(await res.text(), label).to.include("Cross-site request refused");
        expect(await ctx.cookies(d.baseUrl), label).to.deep.equal([]);
      } finally {
        await ctx.close();
        site.close();
      }
    }
  });

  it("refuses Origin: null unless the browser says same-origin (HTTP level)", async () => {
    const post = (headers: Record<string, string>) =>
      d.request("POST", "/login", undefined, {
        auth: false,
        raw: `token=${encodeURIComponent(d.token)}`,
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      });
    expect((await post({ origin: "null", "sec-fetch-site": "same-origin" })).status).to.equal(303);
    expect((await post({ origin: "null" })).status).to.equal(403);
    expect((await post({ origin: "null", "sec-fetch-site": "same-site" })).status).to.equal(403);
    expect((await post({ origin: "null", "sec-fetch-site": "cross-site" })).status).to.equal(403);
    expect((await post({ origin: "http://evil.example", "sec-fetch-site": "same-origin" })).status).to.equal(403);
  });

  it("serves the page with a strict CSP and content-hashed assets with year-long caching; others go to /login", async () => {
    expect((await d.request("GET", "/", undefined, { auth: false })).status).to.equal(302);
    const page = await d.request("GET", "/");
    expect(page.status).to.equal(200);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).to.include("script-src 'self'").and.include("connect-src 'self'").and.include("default-src 'none'");
    expect(csp).to.not.include("unsafe-inline").and.not.include("unsafe-eval");
    expect(page.text).to.not.match(/<script>(?!<\/script>)/); // no inline script
    const asset = /\/assets\/(main-[A-Z0-9]+\.js)/.exec(page.text)?.[0] ?? "";
    const res = await d.request("GET", `${d.baseUrl}${asset}`);
    expect(res.status).to.equal(200);
    expect(res.headers.get("cache-control")).to.include("immutable");
    expect(res.headers.get("content-type")).to.include("javascript");
    expect((await d.request("GET", `${d.baseUrl}/assets/nope-ABC.js`)).status).to.equal(404);
    expect((await d.request("GET", `${d.baseUrl}/assets/..%2Fmanifest.json`)).status).to.equal(404);
  });

  it("a one-time sign-in link signs in once, leaves the address bar clean and never reaches the log", async () => {
    const link = loginLink(d.baseUrl, d.token);
    const code = new URL(link).searchParams.get("code") ?? "";
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await page.goto(link);
    await page.getByRole("navigation", { name: "Sessions" }).waitFor();
    expect(page.url()).to.equal(`${d.baseUrl}/`);
    // Used once: a second browser gets the sign-in page with an explanation.
    const other = await browser.newContext();
    const page2 = await other.newPage();
    const res = await page2.goto(link);
    expect(res?.status()).to.equal(401);
    await page2.getByText("expired or was already used").waitFor();
    expect(await other.cookies()).to.deep.equal([]);
    // Expired and forged codes are refused.
    const expired = mintLoginCode(d.token, -1000);
    expect((await d.request("GET", `/login?code=${expired}`, undefined, { auth: false })).status).to.equal(401);
    const forged = `${mintLoginCode("another-token")}`;
    expect((await d.request("GET", `/login?code=${forged}`, undefined, { auth: false })).status).to.equal(401);
    expect((await d.request("GET", "/login?code=garbage", undefined, { auth: false })).status).to.equal(401);
    await d.stop();
    let log = "";
    try {
      log = readFileSync(join(d.home, "agentd.log"), "utf8");
    } catch {
      // no log file at this level: nothing could leak
    }
    expect(log).to.not.include(code);
    await ctx.close();
    await other.close();
  });
});

describe("sign-in links from the CLI", function () {
  this.timeout(30_000);
  const run = promisify(execFile);
  const MAIN = fileURLToPath(new URL("../host/main.js", import.meta.url));

  it("`agentd serve` prints a one-time link (output not a terminal); `agentd open --print` mints another", async () => {
    const home = makeTempHome();
    const p = await spawnDaemon(home);
    try {
      // server.json is written before the link is printed: wait for the line itself.
      const served = await new Promise<string>((resolve) => {
        const check = () => {
          const m = /Open the web UI: (\S+)\n/.exec(p.stdout());
          if (m?.[1]) resolve(m[1]);
        };
        p.child.stdout?.on("data", check);
        check();
      });
      const { stdout } = await run(process.execPath, [MAIN, "--home", home, "open", "--print"]);
      const opened = stdout.trim();
      for (const link of [served, opened]) {
        expect(link).to.match(new RegExp(`^${p.info.url}/login\\?code=`));
        const first = await fetch(link, { redirect: "manual" });
        expect(first.status).to.equal(303);
        expect(first.headers.get("location")).to.equal("/");
        const cookie = (first.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
        expect(cookie).to.match(/^agentd_session=/);
        const home200 = await fetch(`${p.info.url}/`, { headers: { cookie }, redirect: "manual" });
        expect(home200.status).to.equal(200);
        expect((await fetch(link, { redirect: "manual" })).status).to.equal(401);
      }
      p.child.kill("SIGINT");
      await p.exited;
      const log = readFileSync(join(home, "agentd.log"), "utf8");
      for (const link of [served, opened]) {
        expect(log).to.not.include(new URL(link).searchParams.get("code") ?? "x");
      }
      expect(p.stderr()).to.not.include("code=");
    } finally {
      p.child.kill("SIGKILL");
      rmSync(home, { recursive: true, force: true });
    }
  });
});
