import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { screenshotDir } from "./support/browser.js";
import { text, tools } from "./support/fake-provider.js";
import { webWorld } from "./support/web-fixture.js";

/**
 * The smaller things a daily user notices: a card that waits for the user says so, a failed edit is not shown as
 * applied, the model's error trailer stays with the model, plain output keeps its colour, code can be copied, the
 * last message can be sent again or edited, Ctrl+K finds anything, the tab title tells, footers read the same after a
 * reload, and the phone header keeps to one row.
 */
describe("web UI: the details of daily use (headless Chromium)", function () {
  this.timeout(60_000);
  const w = webWorld();
  const SHOTS = screenshotDir();
  before(async () => {
    await w.ctx.grantPermissions(["clipboard-read", "clipboard-write"], { origin: w.d.baseUrl });
  });

  const message = () => w.page.getByRole("textbox", { name: "Message" });
  const transcript = () => w.page.locator(".transcript");
  async function open(): Promise<string> {
    const id = await w.d.createSession({ cwd: w.work });
    await w.page.goto(`${w.d.baseUrl}/#/s/${id}`);
    await message().waitFor();
    return id;
  }
  async function send(t: string): Promise<void> {
    await message().fill(t);
    await message().press("Enter");
  }

  it("a command waiting for Allow/Deny says so on its card, not 'running'; the tab title says it needs you", async () => {
    await open();
    w.fake.script(tools([{ name: "bash", args: { command: "rm -rf ./build" } }]), text("Sure, skipped."));
    await send("clean");
    const card = transcript().locator("details.tool", { hasText: "rm -rf ./build" });
    await card.locator(".badge", { hasText: "waiting for you" }).waitFor();
    await w.page.waitForFunction(() => document.title.startsWith("(1) Needs you"));
    const icon = await w.page.locator('link[rel="icon"]').getAttribute("href");
    expect(decodeURIComponent(icon ?? "")).to.include("#e5a000");
    await w.page.getByRole("button", { name: "Deny" }).click();
    await transcript().getByText("Sure, skipped.").waitFor();
    await card.locator(".badge", { hasText: "failed" }).waitFor();
    // The denial reads once, without the model's "[error code: …]" trailer.
    expect(await card.textContent()).to.not.include("[error code:");
    await w.page.waitForFunction(() => !document.title.includes("Needs you"));
  });

  it("a failed edit is marked as not applied", async () => {
    await open();
    w.fake.script(
      tools([{ name: "edit", args: { filePath: "missing.txt", oldString: "a", newString: "b" } }]),
      text("Oops."),
    );
    await send("edit it");
    await transcript().getByText("Oops.").waitFor();
    const card = transcript().locator("details.tool", { hasText: "missing.txt" });
    await card.locator(".diff.not-applied .badge", { hasText: "not applied" }).waitFor();
  });

  it("code blocks: plain output keeps its colour, labelled code is highlighted, each has a Copy button", async () => {
    await open();
    w.fake.script(text("Output:\n\n```\nERROR something failed at line 3\n```\n\n```ts\nconst x: number = 1;\n```\n"));
    await send("show me");
    const blocks = transcript().locator(".md pre");
    await blocks.nth(1).locator(".hljs-keyword").first().waitFor();
    expect(await blocks.nth(0).locator("[class^='hljs-']").count()).to.equal(0);
    await blocks.nth(0).getByRole("button", { name: "Copy code" }).click();
    await blocks.nth(0).getByRole("button", { name: "Copy code" }).filter({ hasText: "Copied" }).waitFor();
    expect(await w.page.evaluate(() => navigator.clipboard.readText())).to.equal("ERROR something failed at line 3\n");
  });

  it("Retry replaces the last message's answer; Edit and resend puts the message back in the composer", async () => {
    const id = await open();
    w.fake.script(text("First try."), text("Second try."));
    await send("explain the build");
    await transcript().getByText("First try.").waitFor();
    await w.page.getByRole("group", { name: "Last message" }).getByRole("button", { name: /Retry/ }).click();
    await transcript().getByText("Second try.").waitFor();
    // The provider saw the question once, without the first answer; the transcript holds one question, one answer.
    const asked = JSON.stringify(w.fake.requests.at(-1));
    expect(asked).to.include("explain the build").and.not.include("First try.");
    expect(asked.split("explain the build").length - 1).to.equal(1);
    await transcript().getByText("First try.").waitFor({ state: "detached" });
    expect(await transcript().getByText("explain the build").count()).to.equal(1);
    const stored = (await w.d.get(`/sessions/${id}`)).body.messages.map((m: { content: string }) => m.content);
    expect(stored).to.deep.equal(["explain the build", "Second try."]);
    await w.page
      .getByRole("group", { name: "Last message" })
      .getByRole("button", { name: /Edit and resend/ })
      .click();
    await w.page.waitForFunction(
      () => document.querySelector<HTMLTextAreaElement>("textarea[aria-label=Message]")?.value === "explain the build",
    );
  });

  it("turn footers read the same live and after a reload", async () => {
    await open();
    w.fake.script(tools([{ name: "ls", args: { path: "." } }]), text("Listed."));
    await send("list");
    await transcript().getByText("Listed.").waitFor();
    // The answer's text streams before the turn ends; its footer comes with the turn's end.
    await transcript().locator(".turn-footer").first().waitFor();
    const live = await transcript().locator(".turn-footer").allTextContents();
    expect(live).to.have.length(1);
    await w.page.reload();
    await transcript().getByText("Listed.").waitFor();
    expect(await transcript().locator(".turn-footer").allTextContents()).to.deep.equal(live);
    expect(live[0]).to.match(/^fake-model · \d+\.\d s$/);
  });

  it("Ctrl+K finds actions, sessions and every slash command", async () => {
    await open();
    await w.page.keyboard.press("Control+k");
    const palette = w.page.getByRole("dialog", { name: "Command palette" });
    const search = palette.getByRole("searchbox");
    await search.fill("turn-cap");
    await palette.getByRole("option", { name: /\/turn-cap/ }).waitFor();
    await search.press("Enter");
    await palette.waitFor({ state: "hidden" });
    expect(await message().inputValue()).to.equal("/turn-cap ");
    await w.page.keyboard.press("Control+k");
    await search.fill("settings");
    await search.press("Enter");
    await w.page.getByRole("form", { name: "Provider" }).waitFor();
    // The slash palette lists every match, not the first eight.
    await w.page.getByRole("button", { name: "Close" }).click();
    await message().fill("/");
    const all = w.page.getByRole("listbox", { name: "Commands" }).getByRole("option");
    await all.first().waitFor();
    expect(await all.count()).to.be.greaterThan(8);
  });

  it("the Changes panel labels deleted files", async () => {
    const { execFileSync } = await import("node:child_process");
    const git = (...a: string[]) =>
      execFileSync("git", ["-c", "user.email=a@b", "-c", "user.name=a", ...a], { cwd: w.work, stdio: "ignore" });
    git("init", "-q", "-b", "main");
    writeFileSync(join(w.work, "old.txt"), "bye\n");
    git("add", ".");
    git("commit", "-q", "-m", "init");
    rmSync(join(w.work, "old.txt"));
    await open();
    await w.page.getByRole("button", { name: "Changes" }).click();
    const panel = w.page.getByRole("region", { name: "Changes" });
    await panel.locator(".file-status.deleted", { hasText: "deleted" }).waitFor();
  });

  it("at phone width the session header is one row; the rest is in the ⋯ menu", async () => {
    const phone = await w.browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    try {
      await phone.addCookies(await w.ctx.cookies());
      const p = await phone.newPage();
      const id = await w.d.createSession({ cwd: w.work });
      await w.d.post(`/sessions/${id}/rename`, { title: "Explain this project" });
      await p.goto(`${w.d.baseUrl}/#/s/${id}`);
      const head = p.locator(".session-head");
      await head.getByRole("button", { name: "More session actions" }).waitFor();
      const box = await head.boundingBox();
      expect(box?.height).to.be.lessThan(60);
      expect(await head.getByRole("button", { name: "Fork" }).isVisible()).to.equal(false);
      await head.getByRole("button", { name: "More session actions" }).click();
      const menu = p.getByRole("menu", { name: "Session actions menu" });
      await menu.getByRole("menuitem", { name: "Rename" }).click();
      await p.getByRole("textbox", { name: "Session title" }).fill("Renamed on the phone");
      await p.getByRole("textbox", { name: "Session title" }).press("Enter");
      await head.getByText("Renamed on the phone").waitFor();
      await p.screenshot({ path: join(SHOTS, "phone-session-header.png") });
    } finally {
      await phone.close();
    }
  });
});
