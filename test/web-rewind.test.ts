import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools } from "../testing/fake-provider.js";
import { launchBrowser, signIn, watchPage } from "./support/browser.js";

describe("web UI: Rewind to here (headless Chromium)", function () {
  this.timeout(60_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let dir: string;

  before(async () => {
    browser = await launchBrowser();
    fake = await startFakeProvider();
    d = await startTestDaemon({ config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" } } });
    ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    ctx.setDefaultTimeout(15_000);
    page = await ctx.newPage();
    await signIn(page, d.baseUrl, d.token);
    dir = realpathSync(mkdtempSync(join(tmpdir(), "agentd-web-rewind-")));
  });
  after(async () => {
    await ctx?.close();
    await browser?.close();
    await d?.cleanup();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("shows which files would change and rewinds code and conversation", async () => {
    const watch = watchPage(page);
    writeFileSync(join(dir, "a.txt"), "original\n");
    const id = await d.createSession({ cwd: dir });
    const sse = await d.sse(`/sessions/${id}/events`);
    for (const [prompt, content] of [
      ["first change", "one\n"],
      ["second change", "two\n"],
    ]) {
      fake.script(
        tools([
          { name: "write", args: { path: "a.txt", content } },
          { name: "write", args: { path: `${content.trim()}.txt`, content } },
        ]),
        text("ok"),
      );
      const ends = sse.ofType("end").length;
      await d.post(`/sessions/${id}/chat`, { text: prompt });
      await sse.waitFor(() => sse.ofType("end").length > ends, 20_000);
    }
    await page.goto(`${d.baseUrl}/#/s/${id}`);
    const second = page.locator("article.msg.user", { hasText: "second change" });
    await second.getByRole("button", { name: "Rewind to here" }).click();
    const group = second.getByRole("group", { name: "Rewind" });
    // The preview is fetched when the panel opens: wait for it (a slower store answers later).
    await group.locator("li").first().waitFor();
    expect(await group.locator("li").allInnerTexts()).to.deep.equal(["a.txt restored", "two.txt removed"]);
    await group.getByRole("button", { name: "Rewind code and conversation" }).click();
    await page.locator("article.msg.user", { hasText: "second change" }).waitFor({ state: "detached" });
    expect(await page.locator("article.msg.user").allInnerTexts()).to.have.length(1);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).to.equal("one\n");
    expect(existsSync(join(dir, "two.txt"))).to.equal(false);
    expect(existsSync(join(dir, "one.txt"))).to.equal(true);
    sse.close();
    expect(watch.errors).to.deep.equal([]);
  });
});
