import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { Browser, Page } from "playwright-core";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { launchBrowser, signIn, watchPage } from "./support/browser.js";
import { startTestDaemon, type TestDaemon } from "./support/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools, turn } from "./support/fake-provider.js";
import { SHOTS } from "./support/web-ui.js";

describe("web UI screenshots and phone width (a fresh daemon, so the list shows only this story)", function () {
  this.timeout(60_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let browser: Browser;
  let page: Page;
  let watch: { errors: string[] };
  let work: string;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    work = mkdtempSync(join(tmpdir(), "agentd-web-"));
    browser = await launchBrowser();
    fake = await startFakeProvider();
    d = await startTestDaemon({
      config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "qwen3-coder" } },
      builtins: builtinPlugins.map(builtinSource),
    });
    for (const [title, pinned] of [
      ["Release notes for 0.2", true],
      ["Why is CI flaky on Node 20?", false],
      ["Add retries to the HTTP client", false],
    ] as const) {
      const id = await d.createSession({ cwd: work, title });
      if (pinned) await d.post(`/sessions/${id}/pin`, { pinned: true });
    }
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    ctx.setDefaultTimeout(15_000);
    page = await ctx.newPage();
    watch = watchPage(page);
    await signIn(page, d.baseUrl, d.token);
  });
  after(async () => {
    await browser?.close();
    await d?.cleanup();
    await fake?.close();
    rmSync(work, { recursive: true, force: true });
  });

  const message = () => page.getByRole("textbox", { name: "Message" });
  const transcript = () => page.locator(".transcript");
  async function send(t: string) {
    await message().fill(t);
    await message().press("Enter");
  }

  it("works at phone width and writes screenshots of the main screens (light and dark)", async () => {
    const id = await d.createSession({ cwd: work, title: "Fix the parser" });
    await page.goto(`${d.baseUrl}/#/s/${id}`);
    await message().waitFor();
    fake.script(
      turn(
        { reasoning: "The parser drops the last token; check the loop bound." },
        {
          content:
            "The loop stops one token early. Here is the fix:\n\n```ts\nfor (let i = 0; i <= tokens.length - 1; i++) {\n  out.push(parse(tokens[i]));\n}\n```\n",
        },
        { toolCall: { id: "s1", name: "bash", arguments: JSON.stringify({ command: "echo 'all 42 tests pass'" }) } },
      ),
      text("Done: **all tests pass**."),
    );
    await send("Why does the parser drop the last token?");
    await transcript().getByText("Done:").waitFor();
    fake.script(tools([{ name: "bash", args: { command: "rm -rf ./dist" }, id: "s2" }]), text("ok"));
    await send("and clean dist");
    await page.getByRole("button", { name: "Allow once" }).waitFor();
    await page.getByRole("navigation", { name: "Sessions" }).getByRole("status", { name: "running" }).waitFor();
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      // No theme was chosen on the daemon or in the page: the system's preference decides.
      await page.waitForFunction((s) => document.documentElement.dataset.theme === s, scheme);
      await page.setViewportSize({ width: 1440, height: 900 });
      await page.screenshot({ path: join(SHOTS, `desktop-${scheme}.png`) });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: join(SHOTS, `phone-${scheme}.png`) });
    }
    // At phone width the session list is behind the menu button, and the composer still fits.
    const nav = page.getByRole("navigation", { name: "Sessions" });
    const box = await message().boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390).to.equal(true);
    const hidden = await nav.boundingBox();
    expect(hidden && hidden.x + hidden.width <= 0).to.equal(true);
    await page.getByRole("button", { name: "Show sessions" }).click();
    await nav.getByText("Fix the parser").waitFor();
    await page.waitForFunction(() => (document.querySelector("nav")?.getBoundingClientRect().x ?? -1) >= 0);
    await page.screenshot({ path: join(SHOTS, "phone-sessions-dark.png") });
    await nav.getByText("Fix the parser").click();
    await page.getByRole("button", { name: "Deny" }).click();
    await transcript().getByText("ok").last().waitFor();
    expect(watch.errors).to.deep.equal([]);
  });
});
