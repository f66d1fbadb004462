import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { launchBrowser, signIn, watchPage } from "./support/browser.js";
import { startTestDaemon, type TestDaemon } from "./support/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools, turn } from "./support/fake-provider.js";
import { askDatabase } from "./support/questions.js";
import { SHOTS } from "./support/web-ui.js";

describe("web UI in headless Chromium, against the real daemon and the fake provider", function () {
  this.timeout(60_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let watch: { errors: string[] };
  let work: string;

  const config = () => ({
    provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" },
    pluginOptions: { files: { browseRoots: [tmpdir(), homedir()] } },
  });
  const boot = (extra: { home?: string; port?: number } = {}) =>
    startTestDaemon({ config: config(), builtins: builtinPlugins.map(builtinSource), ...extra });

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchBrowser();
    fake = await startFakeProvider();
    d = await boot();
    ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    ctx.setDefaultTimeout(15_000);
    const p = await ctx.newPage();
    await signIn(p, d.baseUrl, d.token);
    await p.close();
  });
  after(async () => {
    await ctx?.close();
    await browser?.close();
    await d?.cleanup();
    await fake?.close();
  });
  beforeEach(async () => {
    fake.clearScript();
    work = mkdtempSync(join(tmpdir(), "agentd-web-"));
    page = await ctx.newPage();
    watch = watchPage(page);
  });
  afterEach(async function () {
    await page?.close();
    rmSync(work, { recursive: true, force: true });
    // Nothing may throw in the page or break the CSP in any test (the favicon-free page has no stray 404s either).
    if (this.currentTest?.state === "passed") expect(watch.errors).to.deep.equal([]);
  });

  const message = () => page.getByRole("textbox", { name: "Message" });
  async function openSession(cwd = work): Promise<string> {
    const id = await d.createSession({ cwd });
    await page.goto(`${d.baseUrl}/#/s/${id}`);
    await message().waitFor();
    return id;
  }
  async function send(t: string) {
    await message().fill(t);
    await message().press("Enter");
  }
  const transcript = () => page.locator(".transcript");

  it("creates a session from the UI and streams the scripted answer in as Markdown", async () => {
    await page.goto(`${d.baseUrl}/`);
    await page.getByRole("button", { name: "New session", exact: true }).click();
    await page.getByRole("textbox", { name: "Working directory" }).fill(work);
    await page.getByRole("textbox", { name: "Working directory" }).press("Tab");
    await page.getByRole("button", { name: "Create session" }).click();
    await message().waitFor();
    let release!: () => void;
    fake.script(
      turn(
        { content: "Here is **the" },
        { content: " plan**:\n\n- first\n" },
        { waitFor: new Promise<void>((r) => (release = r)) },
        { content: "- second\n\n```ts\nconst x = 1;\n```\n" },
      ),
    );
    await send("Make a plan");
    await page.getByRole("article", { name: "You" }).getByText("Make a plan").waitFor();
    // Streaming: the first part shows before the provider has finished.
    await transcript().locator("strong", { hasText: "the plan" }).waitFor();
    await page.getByRole("button", { name: "Stop" }).waitFor();
    release();
    await transcript().getByText("const x = 1;").waitFor();
    await transcript().locator("li", { hasText: "second" }).waitFor();
    await page.getByRole("button", { name: "Stop" }).waitFor({ state: "hidden" });
    // The session is listed (and marked with its first message as title).
    await page.getByRole("navigation", { name: "Sessions" }).getByText("Make a plan").waitFor();
  });

  it("shows a bash tool card with its live output and result", async () => {
    await openSession();
    fake.script(
      tools([{ name: "bash", args: { command: "echo step1; sleep 0.3; echo step2" }, id: "b1" }]),
      text("Ran it."),
    );
    await send("run the steps");
    const card = transcript().locator("details.tool", { hasText: "bash" });
    await card.locator("pre.output", { hasText: "step2" }).waitFor();
    await card.locator(".badge", { hasText: "done" }).waitFor();
    await transcript().getByText("Ran it.").waitFor();
  });

  it("Deny and Allow a dangerous command; the confirmation survives a reload", async () => {
    await openSession();
    const marker = join(work, "gone");
    const bash = (id: string) => tools([{ name: "bash", args: { command: `rm -rf ./build && touch ${marker}` }, id }]);
    fake.script(bash("b1"), text("Understood, not running it."));
    await send("clean the build");
    const card = page.getByRole("region", { name: "Confirm command" });
    await card.locator("pre", { hasText: "rm -rf ./build" }).waitFor();
    await card.getByText(/left/).waitFor();
    await page.getByRole("button", { name: "Deny" }).click();
    await transcript().getByText("Understood, not running it.").waitFor();
    expect(existsSync(marker)).to.equal(false);

    fake.script(bash("b2"), text("Cleaned."));
    await send("clean it, really");
    await card.waitFor();
    await page.reload();
    await page.getByRole("button", { name: "Allow once" }).click();
    await transcript().getByText("Cleaned.").waitFor();
    expect(existsSync(marker)).to.equal(true);
    await card.waitFor({ state: "hidden" });
  });

  it("answers a question from the agent", async () => {
    await openSession();
    fake.script(askDatabase(), text("SQLite it is."));
    await send("set up storage");
    await page.getByRole("radio", { name: "SQLite" }).check();
    await page.getByRole("button", { name: "Answer" }).click();
    await transcript().getByText("SQLite it is.").waitFor();
    const back = JSON.stringify(fake.requests.at(-1));
    expect(back).to.include("sqlite");
  });

  it("marks a session that waits for its user in the list, live, until it is answered", async () => {
    const here = await d.createSession({ cwd: work, title: "Session on screen" });
    const there = await d.createSession({ cwd: work, title: "Session asking" });
    await page.goto(`${d.baseUrl}/#/s/${here}`);
    await message().waitFor();
    const nav = page.getByRole("navigation", { name: "Sessions" });
    const row = nav.getByRole("link", { name: /Session asking/ });
    await row.waitFor();
    const badge = row.locator(".waiting");
    expect(await badge.count()).to.equal(0);
    // The other session asks (driven over the API, as another client would): its row says so at once.
    fake.script(askDatabase(), text("SQLite it is."));
    expect((await d.post(`/sessions/${there}/chat`, { text: "set up storage" })).status).to.equal(202);
    await badge.waitFor();
    expect(await badge.textContent()).to.equal("Needs you: answer a question");
    expect(
      await nav
        .getByRole("link", { name: /Session on screen/ })
        .locator(".waiting")
        .count(),
    ).to.equal(0);
    // It reads in the daemon's light and dark themes (the page's own choice, dropped again afterwards).
    for (const t of ["light", "dark"]) {
      await page.evaluate((id) => localStorage.setItem("agentd.theme", id), t);
      await page.reload();
      // The theme's palette is painted (its warning colour is the marker's).
      await page.waitForFunction(
        (id) =>
          document.documentElement.dataset.theme === id &&
          document.documentElement.style.getPropertyValue("--attn") !== "",
        t,
      );
      await badge.waitFor();
      await nav.screenshot({ path: join(SHOTS, `sessions-waiting-${t}.png`) });
    }
    await page.evaluate(() => localStorage.removeItem("agentd.theme"));
    // At phone width the list is behind the menu button, which counts the other sessions that need the user.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("button", { name: "Show sessions (1 need you)" }).waitFor();
    await page.screenshot({ path: join(SHOTS, "phone-waiting.png"), clip: { x: 0, y: 0, width: 390, height: 120 } });
    await page.setViewportSize({ width: 1280, height: 800 });
    // Answered in the UI: the marker goes.
    await row.click();
    await page.getByRole("radio", { name: "SQLite" }).check();
    await page.getByRole("button", { name: "Answer" }).click();
    await badge.waitFor({ state: "detached" });
    await transcript().getByText("SQLite it is.").waitFor();
    expect(await badge.count()).to.equal(0);
  });

  it("approves a plan in plan mode and shows the todo list", async () => {
    const id = await openSession();
    const modeSet = page.waitForResponse((r) => r.url().endsWith("/mode"));
    await page.getByRole("checkbox", { name: "Plan mode" }).check();
    expect((await modeSet).status()).to.equal(200);
    const plans = join(work, ".agentd", "plans", id);
    mkdirSync(plans, { recursive: true });
    writeFileSync(join(plans, "plan.md"), "# Plan\n\n## Steps\n- [ ] add the parser\n- [ ] write tests\n");
    fake.script(tools([{ name: "plan_done", args: { summary: "parser plan" }, id: "p1" }]));
    await send("plan the parser");
    await page.getByRole("button", { name: "Approve plan" }).click();
    await page.getByText("add the parser").waitFor();
    await page.getByRole("button", { name: "Approve plan" }).waitFor({ state: "hidden" });
  });

  it("keeps planning: the plan card goes, in this page and for the daemon, and the session stays in plan mode", async () => {
    const id = await openSession();
    const modeSet = page.waitForResponse((r) => r.url().endsWith("/mode"));
    await page.getByRole("checkbox", { name: "Plan mode" }).check();
    expect((await modeSet).status()).to.equal(200);
    const plans = join(work, ".agentd", "plans", id);
    mkdirSync(plans, { recursive: true });
    writeFileSync(join(plans, "plan.md"), "# Plan\n\n## Steps\n- [ ] add the parser\n");
    fake.script(tools([{ name: "plan_done", args: { summary: "parser plan" }, id: "p1" }]));
    await send("plan the parser");
    const declined = page.waitForResponse((r) => r.url().endsWith("/plan-transition"));
    await page.getByRole("button", { name: "Keep planning" }).click();
    expect((await declined).status()).to.equal(202);
    await page.getByRole("button", { name: "Approve plan" }).waitFor({ state: "hidden" });
    const view = (await d.get(`/sessions/${id}`)).body;
    expect(view.planTransition).to.equal(undefined);
    expect(view.mode).to.equal("plan");
    expect(await page.getByRole("checkbox", { name: "Plan mode" }).isChecked()).to.equal(true);
  });

  it("asks to trust a project that brings its own configuration, and records both answers", async () => {
    for (const [button, trusted] of [
      ["Trust project", true],
      ["Don't trust", false],
    ] as const) {
      const project = mkdtempSync(join(tmpdir(), "agentd-project-"));
      writeFileSync(join(project, "AGENTS.md"), "Use tabs.\n");
      try {
        await openSession(project);
        const card = page.getByRole("region", { name: "Trust this project?" });
        await card.getByText("AGENTS.md").waitFor();
        await card.getByRole("button", { name: button }).click();
        await card.waitFor({ state: "hidden" });
        const state = await d.get(`/projects/trust?cwd=${encodeURIComponent(project)}`);
        expect(state.body).to.include({ trusted });
        expect(state.body.decidedAt).to.be.a("string");
      } finally {
        rmSync(project, { recursive: true, force: true });
      }
    }
  });

  it("Stop (and Esc) abort a running turn", async () => {
    await openSession();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    fake.script(turn({ content: "Thinking hard" }, { waitFor: held }));
    await send("a long task");
    await transcript().getByText("Thinking hard").waitFor();
    await page.getByRole("button", { name: "Stop" }).click();
    await transcript().getByText("Stopped.").waitFor();
    await page.getByRole("button", { name: "Stop" }).waitFor({ state: "hidden" });
    release();
    fake.script(turn({ content: "Again" }, { waitFor: new Promise<void>((r) => (release = r)) }));
    await send("another long task");
    await transcript().getByText("Again").waitFor();
    await message().press("Escape");
    await transcript().getByText("Stopped.").nth(1).waitFor();
    release();
  });

  it("a reload mid-turn shows what streamed so far and the rest as it comes", async () => {
    await openSession();
    let release!: () => void;
    fake.script(
      turn(
        { content: "First half," },
        { waitFor: new Promise<void>((r) => (release = r)) },
        { content: " second half." },
      ),
    );
    await send("stream something");
    await transcript().getByText("First half,").waitFor();
    await page.reload();
    await transcript().getByText("First half,").waitFor();
    release();
    await transcript().getByText("First half, second half.").waitFor();
  });

  it("survives a daemon restart: shows it is unreachable, keeps the draft, and carries on", async () => {
    const id = await openSession();
    fake.script(text("Before the restart."));
    await send("hello");
    await transcript().getByText("Before the restart.").waitFor();
    const { home } = d;
    const port = Number(new URL(d.baseUrl).port);
    await d.stop();
    await page.getByRole("alert").getByText("unreachable").waitFor();
    await message().fill("typed while it was down");
    d = await boot({ home, port });
    await page.getByRole("alert").waitFor({ state: "hidden", timeout: 20_000 });
    expect(await message().inputValue()).to.equal("typed while it was down");
    fake.script(text("After the restart."));
    await message().press("Enter");
    await transcript().getByText("After the restart.").waitFor({ timeout: 20_000 });
    expect(page.url()).to.include(id);
    // Errors logged while the daemon was down (failed requests) are expected here.
    watch.errors.length = 0;
  });

  it("shows model output containing HTML as text: nothing executes", async () => {
    await openSession();
    fake.script(text('Look: <img src=x onerror="window.__pwned=1"> and <script>window.__pwned=2</script> done'));
    await send("say something nasty");
    await transcript().getByText("done", { exact: false }).last().waitFor();
    await transcript().getByText('<img src=x onerror="window.__pwned=1">', { exact: false }).waitFor();
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).to.equal(undefined);
    expect(await transcript().locator("img[src=x], script").count()).to.equal(0);
  });

  it("keeps other tabs in sync through /sessions/events", async () => {
    await page.goto(`${d.baseUrl}/`);
    const nav = page.getByRole("navigation", { name: "Sessions" });
    await nav.waitFor();
    const id = await d.createSession({ cwd: work });
    await d.post(`/sessions/${id}/rename`, { title: "Renamed elsewhere" });
    await nav.getByText("Renamed elsewhere").waitFor();
  });
});
