import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { launchBrowser, screenshotDir, signedInContext, watchPage } from "./support/browser.js";
import { makeTempHome, startTestDaemon, type TestDaemon } from "./support/daemon.js";
import { type FakeProvider, fail, startFakeProvider, text, tools } from "./support/fake-provider.js";

/**
 * Clicks `button` and presses Esc within one task and its microtasks: what it opens is drawn, but no frame has been
 * painted yet (a listener added by an effect that waits for the next frame would miss the key). Whether `opened`
 * was drawn before the Esc.
 */
function openAndEscBeforeNextFrame(page: Page, button: string, opened: string): Promise<boolean> {
  return page.evaluate(
    async ([button, opened]) => {
      document.querySelector<HTMLButtonElement>(button)?.click();
      for (let i = 0; i < 3; i++) await Promise.resolve();
      const shown = document.querySelector(opened) !== null;
      document.activeElement?.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
      return shown;
    },
    [button, opened] as const,
  );
}

/**
 * Starting work where the project is: a typed directory is the one used (checked first), the picker browses outside
 * the home directory, the drawer at phone width gets out of the way, the model is picked from the provider's list,
 * and a failed turn's error survives a reload. The daemon's home directory is not where the projects are.
 */
describe("web UI: new session, directory picker, drawer and model picker (headless Chromium)", function () {
  this.timeout(60_000);
  let userHome: string;
  let projects: string;
  let browser: Browser;
  let fake: FakeProvider;
  let d: TestDaemon;
  /** Signed in at desktop size; the phone tests copy its cookie. */
  let ctx: BrowserContext;
  let page: Page;
  let watch: { errors: string[] };
  const SHOTS = screenshotDir();

  before(async () => {
    browser = await launchBrowser();
    fake = await startFakeProvider();
    // The user's home and the daemon's default directory are elsewhere: the projects live under /tmp/….
    userHome = makeTempHome("agentd-user-home-");
    projects = mkdtempSync(join(tmpdir(), "agentd-projects-"));
    mkdirSync(join(projects, "alpha", "src"), { recursive: true });
    mkdirSync(join(projects, "beta"));
    d = await startTestDaemon({
      config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" }, defaultCwd: userHome },
      builtins: builtinPlugins.map(builtinSource),
    });
    ctx = await signedInContext(browser, d.baseUrl, d.token);
  });
  after(async () => {
    await Promise.all([ctx?.close(), d?.cleanup(), fake?.close()]);
    await browser?.close();
    rmSync(userHome, { recursive: true, force: true });
    rmSync(projects, { recursive: true, force: true });
  });
  beforeEach(async () => {
    fake.clearScript();
    fake.setModels(["fake-model"]);
    page = await ctx.newPage();
    watch = watchPage(page);
    await page.goto(`${d.baseUrl}/`);
    await page.getByRole("navigation", { name: "Sessions" }).waitFor();
  });
  afterEach(async function () {
    await page?.close();
    if (this.currentTest?.state === "passed") expect(watch.errors).to.deep.equal([]);
  });

  const sessionCount = async () => ((await d.get<unknown[]>("/sessions")).body as unknown[]).length;
  const newSessionForm = () => page.getByRole("form", { name: "New session" });
  const cwdField = () => newSessionForm().getByRole("textbox", { name: "Working directory" });

  it("a typed directory outside the home is the session's directory, at once (Enter, no lookup to wait for)", async () => {
    await page.getByRole("button", { name: "New session", exact: true }).click();
    const target = join(projects, "alpha");
    await cwdField().fill(target);
    await cwdField().press("Enter");
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    const list = (await d.get<Array<{ id: string; cwd: string }>>("/sessions")).body;
    expect(list.map((s) => s.cwd)).to.include(target);
    expect(await page.locator(".session-head .cwd").textContent()).to.include(target);
  });

  it("a typed directory that does not exist is reported in the form, and no session is created", async () => {
    const before = await sessionCount();
    await page.getByRole("button", { name: "New session", exact: true }).click();
    await cwdField().fill(join(projects, "no-such-dir"));
    await newSessionForm().getByRole("button", { name: "Create session" }).click();
    await newSessionForm().getByRole("alert").filter({ hasText: "Not found" }).waitFor();
    expect(await cwdField().getAttribute("aria-invalid")).to.equal("true");
    expect(await sessionCount()).to.equal(before);
    await page.screenshot({ path: join(SHOTS, "new-session-error.png") });
    // The check itself is the only failed request: the 404 of the missing directory.
    expect(watch.errors.every((e) => e.startsWith("HTTP 404 GET") && e.includes("no-such-dir"))).to.equal(true);
    watch.errors.length = 0;
  });

  it("the picker browses any readable directory: up from the home to /, and into a project", async () => {
    await page.getByRole("button", { name: "New session", exact: true }).click();
    const folders = newSessionForm().getByRole("list", { name: "Folders" });
    await folders.waitFor();
    expect(await cwdField().inputValue()).to.equal(userHome);
    // Up from the home directory: the parent is listed, not refused.
    await folders.getByRole("button", { name: "..", exact: true }).click();
    await page.waitForFunction((home) => {
      const input = document.querySelector<HTMLInputElement>("form[aria-label='New session'] input[type=text]");
      return input && input.value !== home;
    }, userHome);
    await cwdField().fill(projects);
    await cwdField().press("Tab");
    await folders.getByRole("button", { name: "alpha/" }).click();
    await folders.getByRole("button", { name: "src/" }).waitFor();
    expect(await cwdField().inputValue()).to.equal(join(projects, "alpha"));
    await page.screenshot({ path: join(SHOTS, "new-session-picker.png") });
    const api = await d.get<{ path: string; parent: string | null }>(`/browse?path=${encodeURIComponent("/")}`);
    expect(api.status).to.equal(200);
    expect(api.body).to.include({ path: "/", parent: null });
  });

  it("picks the model from the provider's list, filtered, the recent one first next time", async () => {
    fake.setModels(["fake-model", "gpt-large", "gpt-small", "other-model"]);
    const id = await d.createSession({ cwd: projects });
    await page.goto(`${d.baseUrl}/#/s/${id}`);
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    const button = page.getByRole("button", { name: /fake-model/ });
    await button.click();
    await page.getByRole("searchbox", { name: "Filter models" }).fill("gpt");
    const list = page.getByRole("listbox", { name: "Models" });
    expect(await list.getByRole("option").allTextContents()).to.deep.equal(["gpt-large", "gpt-small"]);
    await page.screenshot({ path: join(SHOTS, "model-picker.png") });
    await list.getByRole("option", { name: "gpt-small" }).click();
    await page.getByRole("button", { name: /gpt-small/ }).waitFor();
    expect((await d.get<{ model: string }>(`/sessions/${id}`)).body.model).to.equal("gpt-small");
    await page.getByRole("button", { name: /gpt-small/ }).click();
    const first = await list.getByRole("option").first().textContent();
    expect(first).to.include("gpt-small").and.include("recent");
    await page.keyboard.press("Escape");
    await list.waitFor({ state: "hidden" });
    // The same check in the command: a model the provider does not list is refused.
    const typo = await d.post<{ error: string }>(`/sessions/${id}/command`, { command: "/model gpt-smal" });
    expect(typo.status).to.equal(400);
    expect(typo.body.error).to.include("Did you mean: gpt-small");
  });

  it("Esc closes the model list when pressed before the next frame after it opened", async () => {
    const id = await d.createSession({ cwd: projects });
    await page.goto(`${d.baseUrl}/#/s/${id}`);
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    const drawn = await openAndEscBeforeNextFrame(page, ".model-btn", ".model-list");
    expect(drawn, "the list was drawn before Esc").to.equal(true);
    await page.getByRole("listbox", { name: "Models" }).waitFor({ state: "hidden" });
    expect(await page.getByRole("button", { name: /fake-model/ }).getAttribute("aria-expanded")).to.equal("false");
  });

  it("a failed turn keeps its error after a reload", async () => {
    const id = await d.createSession({ cwd: projects });
    fake.script(fail(400, { body: { error: { message: "context too long for this model" } } }));
    await page.goto(`${d.baseUrl}/#/s/${id}`);
    const message = page.getByRole("textbox", { name: "Message" });
    await message.fill("summarise everything");
    await message.press("Enter");
    const error = page.getByRole("article", { name: "Error" });
    await error.getByText("context too long").waitFor();
    await page.reload();
    await error.getByText("context too long").waitFor();
    // A new turn is the last word again: the old error goes.
    fake.script(text("Short answer."));
    await message.fill("just the gist");
    await message.press("Enter");
    await page.locator(".transcript").getByText("Short answer.").waitFor();
    await page.reload();
    await page.locator(".transcript").getByText("Short answer.").waitFor();
    expect(await error.count()).to.equal(0);
    expect((await d.get<{ lastError?: unknown }>(`/sessions/${id}`)).body.lastError).to.equal(undefined);
  });

  it("sharing previews the page first (tool results off), then gives a link and a clear Stop sharing", async () => {
    const id = await d.createSession({ cwd: projects });
    mkdirSync(join(projects, "secret-dir"), { recursive: true });
    fake.script(
      tools([{ name: "ls", args: { path: "." } }]),
      text("## Summary\n\nThis is **bold**.\n\n| file | kind |\n|---|---|\n| alpha | dir |\n"),
    );
    await page.goto(`${d.baseUrl}/#/s/${id}`);
    const message = page.getByRole("textbox", { name: "Message" });
    await message.fill("what is here?");
    await message.press("Enter");
    await page.locator(".transcript").getByRole("heading", { name: "Summary" }).waitFor();

    await page.getByRole("toolbar", { name: "Session actions" }).getByRole("button", { name: "Share" }).click();
    const dialog = page.getByRole("region", { name: "Share" });
    const toolBox = dialog.getByRole("checkbox", { name: /Include tool results/ });
    expect(await toolBox.isChecked()).to.equal(false);
    const preview = page.frameLocator("iframe[title='Preview of the shared page']");
    await preview.getByRole("heading", { name: "Summary" }).waitFor();
    expect(await preview.locator("body").textContent())
      .to.include("[result not shared]")
      .and.not.include("## Summary")
      .and.not.include("secret-dir");
    expect(await preview.locator("td").first().textContent()).to.equal("alpha");
    expect((await d.get<{ shareToken: string | null }>(`/sessions/${id}`)).body.shareToken).to.equal(null);
    await page.screenshot({ path: join(SHOTS, "share-preview.png") });

    await dialog.getByRole("button", { name: "Create link" }).click();
    const link = dialog.getByRole("textbox", { name: "Share link" });
    await link.waitFor();
    const url = await link.inputValue();
    const shared = await d.get(url, { auth: false });
    expect(shared.status).to.equal(200);
    expect(shared.text).to.include("<h2>Summary</h2>").and.include("[result not shared]");
    // The public page: local times, Markdown as the app shows it.
    const reader = await browser.newPage();
    await reader.goto(url);
    await reader.getByRole("heading", { name: "Summary" }).waitFor();
    const when = await reader.locator("header time").first().textContent();
    expect(when).to.not.match(/T\d\d:|UTC/);
    await reader.close();

    await dialog.getByRole("button", { name: "Stop sharing" }).click();
    await dialog.getByRole("button", { name: "Create link" }).waitFor();
    expect((await d.get(url, { auth: false })).status).to.equal(404);
    expect((await d.get<{ shareToken: string | null }>(`/sessions/${id}`)).body.shareToken).to.equal(null);
  });

  describe("at phone width (390x844)", () => {
    let phone: BrowserContext;
    beforeEach(async () => {
      await page.close();
      phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
      phone.setDefaultTimeout(15_000);
      await phone.addCookies(await ctx.cookies());
      page = await phone.newPage();
      watch = watchPage(page);
      await page.goto(`${d.baseUrl}/`);
    });
    afterEach(async () => {
      await phone?.close();
    });

    const menu = () => page.getByRole("button", { name: /Show sessions/ });
    const drawerOpen = () => page.locator("nav.sidebar.open").count();

    it("the drawer closes for the form it opens, on Esc and on a tap outside", async () => {
      await menu().click();
      await page.locator("nav.sidebar.open").waitFor();
      // The drawer slides in: the picture is taken once it is in place, as a user sees it.
      await page.locator("nav.sidebar.open").evaluate((el) => Promise.all(el.getAnimations().map((a) => a.finished)));
      await page.screenshot({ path: join(SHOTS, "phone-drawer.png") });
      await page.getByRole("navigation", { name: "Sessions" }).getByRole("button", { name: "New session" }).click();
      expect(await drawerOpen()).to.equal(0);
      await newSessionForm().getByRole("button", { name: "Create session" }).waitFor();
      // The button is reachable: nothing lies over it.
      await newSessionForm().getByRole("button", { name: "Create session" }).click({ trial: true, timeout: 3000 });

      await menu().click();
      await page.locator("nav.sidebar.open").waitFor();
      await page.keyboard.press("Escape");
      await page.locator("nav.sidebar.open").waitFor({ state: "detached" });

      await menu().click();
      await page.locator("nav.sidebar.open").waitFor();
      await page.mouse.click(370, 400);
      await page.locator("nav.sidebar.open").waitFor({ state: "detached" });

      await menu().click();
      await page.getByRole("button", { name: "Settings" }).click();
      expect(await drawerOpen()).to.equal(0);
      await page.getByRole("form", { name: "Provider" }).waitFor();
    });

    it("Esc closes the drawer when pressed before the next frame after it opened", async () => {
      await menu().waitFor();
      const drawn = await openAndEscBeforeNextFrame(page, "button.menu", "nav.sidebar.open");
      expect(drawn, "the drawer was drawn before Esc").to.equal(true);
      await page.locator("nav.sidebar.open").waitFor({ state: "detached" });
      expect(await menu().getAttribute("aria-expanded")).to.equal("false");
    });
  });
});
