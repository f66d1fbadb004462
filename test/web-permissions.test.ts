import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, signedInContext, watchPage } from "./support/browser.js";
import { startTestDaemon, type TestDaemon } from "./support/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools } from "./support/fake-provider.js";

const SHOTS = join(import.meta.dirname, "../../test-output/screenshots");

/** The web UI's part of the permission model: why a command is asked, remembering it as a rule, revoking it. */
describe("web UI: command approvals and rules, in headless Chromium", function () {
  this.timeout(60_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let work: string;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchBrowser();
    fake = await startFakeProvider();
    d = await startTestDaemon({ config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" } } });
    ctx = await signedInContext(browser, d.baseUrl, d.token);
  });
  after(async () => {
    await ctx?.close();
    await browser?.close();
    await d?.cleanup();
    await fake?.close();
  });
  beforeEach(async () => {
    work = realpathSync(mkdtempSync(join(tmpdir(), "agentd-webperm-")));
    page = await ctx.newPage();
  });
  afterEach(async () => {
    await page?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("shows why a command is asked and the rule it offers; 'Always allow in this project' saves the edited rule", async () => {
    const watch = watchPage(page);
    const id = await d.createSession({ cwd: work });
    await page.goto(`${d.baseUrl}/#/s/${id}`);
    const message = page.getByRole("textbox", { name: "Message" });
    await message.waitFor();
    mkdirSync(join(work, "build"));
    fake.script(tools([{ name: "bash", args: { command: "rm -rf ./build" }, id: "b1" }]), text("Removed."));
    await message.fill("clean");
    await message.press("Enter");
    const card = page.getByRole("region", { name: "Confirm command" });
    await card.locator(".chip", { hasText: "risky" }).waitFor();
    const rule = card.getByRole("textbox", { name: "Rule to remember" });
    expect(await rule.inputValue()).to.equal("rm -rf ./build");
    await page.screenshot({ path: join(SHOTS, "confirm-rule.png") });
    await rule.fill("rm -rf ./build*");
    await card.getByRole("button", { name: "Always allow in this project" }).click();
    await page.locator(".transcript").getByText("Removed.").waitFor();
    expect(existsSync(join(work, "build"))).to.equal(false);
    const rules = (await d.get("/permissions/rules")).body.rules;
    expect(rules).to.have.length(1);
    expect(rules[0]).to.include({ scope: "project", action: "allow", pattern: "rm -rf ./build*", project: work });

    // Settings → Permissions lists it with the sandbox's state, and revokes it.
    await page.getByRole("button", { name: "Settings" }).click();
    const perms = page.locator(".card", { has: page.getByRole("heading", { name: "Permissions" }) });
    await perms.locator("[data-sandbox=on]").waitFor();
    await perms.locator("code", { hasText: "rm -rf ./build*" }).waitFor();
    await page.screenshot({ path: join(SHOTS, "settings-permissions.png") });
    await perms.getByRole("button", { name: "Revoke rm -rf ./build*" }).click();
    await perms.getByText("No rules yet").waitFor();
    expect((await d.get("/permissions/rules")).body.rules).to.deep.equal([]);
    expect(watch.errors).to.deep.equal([]);
  });
});
