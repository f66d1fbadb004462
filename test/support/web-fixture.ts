import { rmSync } from "node:fs";
import { expect } from "chai";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { builtinSource } from "../../host/plugin-sources.js";
import { builtinPlugins } from "../../plugins/index.js";
import { launchBrowser, signedInContext, watchPage } from "./browser.js";
import { makeTempHome, startTestDaemon, type TestDaemon } from "./daemon.js";
import { type FakeProvider, startFakeProvider } from "./fake-provider.js";

/**
 * A browser suite's world: one daemon (all built-in plugins, the fake provider) and one signed-in desktop context for
 * the suite; per test a fresh page (its errors must stay empty when the test passes) and a project directory.
 */
export interface WebWorld {
  browser: Browser;
  fake: FakeProvider;
  d: TestDaemon;
  ctx: BrowserContext;
  page: Page;
  watch: { errors: string[] };
  work: string;
}

export function webWorld(): WebWorld {
  const w = {} as WebWorld;
  before(async () => {
    w.browser = await launchBrowser();
    w.fake = await startFakeProvider();
    w.d = await startTestDaemon({
      config: { provider: { baseURL: w.fake.url, apiKey: "sk-test", model: "fake-model" } },
      builtins: builtinPlugins.map(builtinSource),
    });
    w.ctx = await signedInContext(w.browser, w.d.baseUrl, w.d.token);
  });
  after(async () => {
    await Promise.all([w.ctx?.close(), w.d?.cleanup(), w.fake?.close()]);
    await w.browser?.close();
  });
  beforeEach(async () => {
    w.fake.clearScript();
    w.work = makeTempHome("agentd-web-work-");
    w.page = await w.ctx.newPage();
    w.watch = watchPage(w.page);
  });
  afterEach(async function () {
    await w.page?.close();
    rmSync(w.work, { recursive: true, force: true });
    if (this.currentTest?.state === "passed") expect(w.watch.errors).to.deep.equal([]);
  });
  return w;
}
