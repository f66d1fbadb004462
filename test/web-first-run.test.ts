import { rmSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, screenshotDir, signIn, watchPage } from "./support/browser.js";
import { agentd } from "./support/cli.js";
import { type DaemonProcess, makeTempHome, spawnDaemon } from "./support/daemon.js";

const SHOTS = screenshotDir();

/**
 * A first run as a new user has it: `agentd serve` without a model provider, a browser signed in. The daemon says
 * what is missing, the home page leads to the provider form, a failed message says why (and keeps saying it after a
 * reload), `agentd run` makes no session for nothing, and a daemon killed with SIGKILL shows as unreachable at once.
 */
describe("web UI: first run without a provider (real daemon process, headless Chromium)", function () {
  this.timeout(60_000);
  let home: string;
  let work: string;
  let proc: DaemonProcess;
  let browser: Browser;
  let page: Page;
  let watch: { errors: string[] };

  before(async () => {
    home = makeTempHome();
    work = makeTempHome("agentd-first-run-work-");
    proc = await spawnDaemon(home);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    if (proc && proc.child.exitCode === null) {
      proc.child.kill("SIGKILL");
      await proc.exited;
    }
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it("the daemon says at start that no provider is connected", () => {
    expect(proc.stdout()).to.include("No model provider is connected yet").and.include("Settings → Provider");
  });

  it("`agentd run` refuses before it makes a session, and says how to connect a provider", async () => {
    const run = agentd(home, ["run", "hello"], { cwd: work });
    expect(await run.exited).to.equal(1);
    expect(run.stderr()).to.include("no model provider is connected").and.include("Settings → Provider");
    const list = await proc.client.get<unknown[]>("/sessions");
    expect(list.body).to.deep.equal([]);
  });

  it("home leads to the provider form; a failed message says why, with a way to Settings, also after a reload", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    ctx.setDefaultTimeout(15_000);
    page = await ctx.newPage();
    watch = watchPage(page);
    await signIn(page, proc.info.url, proc.info.token);
    const card = page.getByRole("region", { name: "Connect a model" });
    await card.getByRole("heading", { name: "Connect a model to start" }).waitFor();
    await page.screenshot({ path: join(SHOTS, "first-run-home.png") });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.setViewportSize({ width: 390, height: 844 });
    await card.getByRole("button", { name: "Connect a provider" }).waitFor();
    await page.screenshot({ path: join(SHOTS, "first-run-home-phone-dark.png") });
    await page.emulateMedia({ colorScheme: "light" });
    await page.setViewportSize({ width: 1440, height: 900 });
    await card.getByRole("button", { name: "Connect a provider" }).click();
    const provider = page.getByRole("form", { name: "Provider" });
    await provider.waitFor();
    expect(await page.evaluate(() => document.activeElement?.getAttribute("type"))).to.equal("url");
    await page.screenshot({ path: join(SHOTS, "first-run-settings.png") });

    const created = await proc.client.post<{ id: string }>("/sessions", { cwd: work });
    await page
      .getByRole("navigation", { name: "Sessions" })
      .getByRole("link", { name: /New session in/ })
      .click();
    const message = page.getByRole("textbox", { name: "Message" });
    await message.waitFor();
    // The session names its model as the default one, not as a model called "default".
    expect(await page.locator(".session-head .cwd").textContent()).to.include("default model");
    await page.getByRole("status").filter({ hasText: "No model is connected" }).waitFor();
    await message.fill("hello");
    await message.press("Enter");
    const error = page.getByRole("article", { name: "Error" });
    await error.getByText("No model provider is configured").waitFor();
    await error.getByRole("button", { name: "Open provider settings" }).waitFor();
    await page.screenshot({ path: join(SHOTS, "first-run-error.png") });

    await page.reload();
    await error.getByText("No model provider is configured").waitFor();
    const view = await proc.client.get<{ lastError?: { message: string; afterSeq: number } }>(
      `/sessions/${created.body.id}`,
    );
    expect(view.body.lastError?.message).to.include("No model provider is configured");
    await error.getByRole("button", { name: "Open provider settings" }).click();
    await provider.waitFor();
    expect(watch.errors).to.deep.equal([]);
    await ctx.close();
  });

  it("a daemon killed with SIGKILL shows as unreachable without the user sending anything", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    ctx.setDefaultTimeout(15_000);
    page = await ctx.newPage();
    await signIn(page, proc.info.url, proc.info.token);
    await page.getByRole("status").filter({ hasText: "Connected" }).waitFor();
    proc.child.kill("SIGKILL");
    await proc.exited;
    await page.getByRole("status").filter({ hasText: "Daemon unreachable" }).waitFor();
    await page.getByRole("alert").filter({ hasText: "The daemon is unreachable" }).waitFor();
    await ctx.close();
  });
});
