import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { SessionStoreToken } from "../core/index.js";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { launchBrowser, screenshotDir, signIn, watchPage } from "./support/browser.js";
import { startTestDaemon, type TestDaemon } from "./support/daemon.js";
import { type FakeProvider, fail, type Step, startFakeProvider, text, turn } from "./support/fake-provider.js";

/** A 1x1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

describe("web UI: composer, settings, panels and session actions (headless Chromium)", function () {
  this.timeout(60_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let watch: { errors: string[] };
  let work: string;

  before(async () => {
    mkdirSync(join(import.meta.dirname, "../../test-output/screenshots"), { recursive: true });
    browser = await launchBrowser();
    fake = await startFakeProvider();
    d = await startTestDaemon({
      config: {
        provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" },
        pluginOptions: { files: { browseRoots: [tmpdir(), homedir()] } },
      },
      builtins: builtinPlugins.map(builtinSource),
    });
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
    if (this.currentTest?.state === "passed") expect(watch.errors).to.deep.equal([]);
  });

  const message = () => page.getByRole("textbox", { name: "Message" });
  const transcript = () => page.locator(".transcript");
  async function openSession(): Promise<string> {
    const id = await d.createSession({ cwd: work });
    await page.goto(`${d.baseUrl}/#/s/${id}`);
    await message().waitFor();
    return id;
  }

  it("Shift+Enter breaks the line, Enter sends; the draft survives a reload", async () => {
    const id = await openSession();
    fake.script(text("Got both lines."));
    await message().fill("first line");
    await message().press("Shift+Enter");
    await message().pressSequentially("second line");
    expect(await message().inputValue()).to.equal("first line\nsecond line");
    await page.reload();
    expect(await message().inputValue()).to.equal("first line\nsecond line");
    // The composer empties the moment Enter is pressed, before the daemon has answered the POST.
    let answer!: () => void;
    const held = new Promise<void>((r) => (answer = r));
    await page.route("**/api/v1/sessions/*/chat", async (route) => {
      await held;
      await route.continue();
    });
    await message().press("Enter");
    expect(await message().inputValue()).to.equal("");
    await message().press("Enter"); // a second Enter while the first is on its way sends nothing
    answer();
    await transcript().getByText("Got both lines.").waitFor();
    await page.unroute("**/api/v1/sessions/*/chat");
    expect(JSON.stringify(fake.requests.at(-1))).to.include("first line\\nsecond line");
    const { body } = await d.get(`/sessions/${id}`);
    expect(body.messages.filter((m: { role: string }) => m.role === "user")).to.have.length(1);
    expect(await message().inputValue()).to.equal("");
    await page.reload();
    expect(await message().inputValue()).to.equal("");
  });

  it("a send the daemon refuses puts the message back in the composer and says why", async () => {
    const id = await openSession();
    await page.route("**/api/v1/sessions/*/chat", (route) =>
      route.fulfill({ status: 503, contentType: "application/json", body: JSON.stringify({ error: "try again" }) }),
    );
    await message().fill("keep me");
    await message().press("Enter");
    await page.getByRole("status").filter({ hasText: "try again" }).waitFor();
    expect(await message().inputValue()).to.equal("keep me");
    await page.reload();
    expect(await message().inputValue()).to.equal("keep me");
    expect((await d.get(`/sessions/${id}`)).body.messages).to.deep.equal([]);
    watch.errors.length = 0; // the refused request is logged by the browser
  });

  it("while a turn runs, a message steers it (shown as a chip) or is queued for after it", async () => {
    await openSession();
    let release!: () => void;
    fake.script(
      turn({ content: "Working on it" }, { waitFor: new Promise<void>((r) => (release = r)) }),
      text("Steered."),
      text("Queued one done."),
    );
    await message().fill("start");
    await message().press("Enter");
    await transcript().getByText("Working on it").waitFor();
    await message().fill("use tabs, not spaces");
    await message().press("Enter");
    await page.locator(".chip.steer", { hasText: "use tabs" }).waitFor();
    await page.getByRole("combobox", { name: "While a turn runs" }).selectOption("queue");
    await message().fill("then write the changelog");
    await message().press("Enter");
    await page.locator(".chip.queued", { hasText: "changelog" }).waitFor();
    release();
    await transcript().getByText("Queued one done.").waitFor();
    await page.locator(".chip").first().waitFor({ state: "hidden" });
    await transcript().getByRole("article", { name: "You" }).filter({ hasText: "then write the changelog" }).waitFor();
    await transcript().getByRole("article", { name: "You" }).filter({ hasText: "use tabs, not spaces" }).waitFor();
  });

  it("the slash-command palette completes from /commands and runs the command", async () => {
    await openSession();
    await message().fill("/turn");
    const palette = page.getByRole("listbox", { name: "Commands" });
    await palette.getByRole("option", { name: /turn-cap/ }).waitFor();
    await message().press("Tab");
    expect(await message().inputValue()).to.equal("/turn-cap ");
    await message().pressSequentially("37");
    await message().press("Enter");
    await transcript()
      .getByText(/cap set to 37/i)
      .waitFor();
  });

  it("attaches an image (thumbnail, sent with the message) and a file (uploaded to the inputs)", async () => {
    const id = await openSession();
    const img = join(work, "shot.png");
    const notes = join(work, "notes.txt");
    writeFileSync(img, PNG);
    writeFileSync(notes, "remember the milk\n");
    await page.getByLabel("Attach files").setInputFiles([img, notes]);
    await page.getByRole("list", { name: "Attachments" }).getByRole("img", { name: "shot.png" }).waitFor();
    await page.getByText("Uploaded notes.txt").waitFor();
    const inputs = await d.get(`/sessions/${id}/inputs`);
    expect(inputs.body.entries.map((e: { name: string }) => e.name)).to.include("notes.txt");
    fake.script(text("Nice picture."));
    await message().fill("look at this");
    await message().press("Enter");
    await transcript().getByText("Nice picture.").waitFor();
    expect(JSON.stringify(fake.requests.at(-1))).to.include("data:image/png;base64");
    await page.getByRole("button", { name: "Attachments", exact: true }).click();
    const panel = page.getByRole("region", { name: "Attachments" });
    await panel.getByRole("link", { name: "notes.txt" }).waitFor();
  });

  it("shows the working-tree changes with hunks and the git branch", async () => {
    execFileSync("git", ["init", "-q", "-b", "main"], { cwd: work });
    execFileSync("git", ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "init"], {
      cwd: work,
    });
    writeFileSync(join(work, "hello.txt"), "hello\nworld\n");
    execFileSync("git", ["add", "hello.txt"], { cwd: work });
    execFileSync("git", ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "add"], { cwd: work });
    writeFileSync(join(work, "hello.txt"), "hello\nthere\n");
    await openSession();
    await page.getByRole("button", { name: "Changes" }).click();
    const panel = page.getByRole("region", { name: "Changes" });
    await panel.getByText("hello.txt").waitFor();
    await panel.getByText("main", { exact: true }).waitFor();
    await panel.locator(".del", { hasText: "world" }).waitFor();
    await panel.locator(".add", { hasText: "there" }).waitFor();
  });

  it("renames, pins and forks a session from its header", async () => {
    await openSession();
    // Renamed in place (no browser prompt): the title becomes a field; Esc cancels, Enter saves.
    await page.getByRole("button", { name: "Rename" }).click();
    await page.getByRole("textbox", { name: "Session title" }).fill("Not this");
    await page.getByRole("textbox", { name: "Session title" }).press("Escape");
    await page.getByRole("button", { name: "Rename" }).click();
    await page.getByRole("textbox", { name: "Session title" }).fill("Parser work");
    await page.getByRole("textbox", { name: "Session title" }).press("Enter");
    const nav = page.getByRole("navigation", { name: "Sessions" });
    await nav.getByText("Parser work").waitFor();
    await page.getByRole("button", { name: "Pin", exact: true }).click();
    await nav.getByRole("region", { name: "Pinned" }).getByText("Parser work").waitFor();
    await page.getByRole("button", { name: "Share" }).click();
    await page.getByRole("region", { name: "Share" }).getByRole("button", { name: "Create link" }).click();
    const url = await page.getByRole("textbox", { name: "Share link" }).inputValue();
    expect((await fetch(url)).status).to.equal(200);
    await page.getByRole("searchbox", { name: "Search sessions" }).fill("Parser wo");
    await nav.getByText("Parser work").waitFor();
    await page.getByRole("searchbox", { name: "Search sessions" }).fill("no such session zzz");
    await nav.getByText("No matching sessions.").waitFor();
    await page.getByRole("searchbox", { name: "Search sessions" }).fill("");
    const before = page.url();
    await page.getByRole("button", { name: "Fork" }).click();
    await page.waitForFunction((old) => location.href !== old, before);
    await message().waitFor();
  });

  it("search says why a row matched: an excerpt of the message, the searched word marked", async () => {
    const id = await d.createSession({ cwd: work, title: "Explain this project" });
    const store = d.daemon.services.get(SessionStoreToken);
    await store.appendMessage(id, { role: "user", content: "where is the quokka renderer configured?" });
    await page.goto(d.baseUrl);
    await page.getByRole("searchbox", { name: "Search sessions" }).fill("quokka");
    const row = page.getByRole("navigation", { name: "Sessions" }).locator(`a[href="#/s/${id}"]`);
    await row.locator(".match", { hasText: "where is the quokka renderer" }).waitFor();
    expect(await row.locator(".match mark").allTextContents()).to.deep.equal(["quokka"]);
    await page.screenshot({ path: join(import.meta.dirname, "../../test-output/screenshots/search-snippet.png") });
  });

  it("opens a long session at its latest messages, pages older ones in at the top, and keeps only what is near the viewport in the page", async function () {
    this.timeout(180_000);
    const id = await d.createSession({ cwd: work });
    const store = d.daemon.services.get(SessionStoreToken);
    const count = 1000;
    await store.appendMessages?.(
      id,
      Array.from({ length: count }, (_, i) => ({
        role: i % 2 ? ("assistant" as const) : ("user" as const),
        content: `message number ${i}.`,
      })),
    );
    // Pages of older history read since the page opened (reaching the top pages them in by itself, maybe already).
    const isHistory = (r: { url(): string }) => r.url().includes(`/sessions/${id}/history`);
    let pagedIn = false;
    page.on("response", (r) => {
      if (isHistory(r)) pagedIn = true;
    });
    await page.goto(`${d.baseUrl}/#/s/${id}`);
    await transcript()
      .getByText(`message number ${count - 1}.`)
      .waitFor();
    expect(await transcript().getByText("message number 0.", { exact: true }).count()).to.equal(0);
    const shown = () => transcript().locator("article").count();
    let most = await shown();
    // The button pages older history in; so does reaching the top (which may have paged it all in already, and taken
    // the button away: a click that finds no button is no failure, a page that never comes is). On a loaded machine
    // the click can miss while the transcript still settles at the bottom: it is asked again, a bounded number of
    // times, each time waiting for the page it asks for.
    for (let attempt = 0; !pagedIn; attempt++) {
      if (attempt === 8) throw new Error("no page of older history was read: neither the button nor the top asked");
      const read = page.waitForResponse(isHistory, { timeout: 5000 }).catch(() => undefined);
      await page
        .getByRole("button", { name: "Load earlier messages" })
        .click({ timeout: 5000 })
        .catch(() => undefined);
      await read;
    }
    const scroller = transcript();
    const firstShown = () => page.evaluate(() => document.querySelector(".transcript article")?.textContent ?? "");
    for (let step = 0; step < 400 && (await transcript().getByText("message number 0.").count()) === 0; step++) {
      // At the top, the next page is read and drawn above what is on screen.
      const before = await firstShown();
      await scroller.evaluate((el) => {
        el.scrollTop = 0;
      });
      await page.waitForFunction((text) => {
        const first = document.querySelector(".transcript article")?.textContent ?? "";
        return first !== text || document.querySelector(".transcript")?.textContent?.includes("message number 0.");
      }, before);
      most = Math.max(most, await shown());
    }
    await transcript().getByText("message number 0.", { exact: true }).waitFor();
    await page.getByRole("button", { name: "Load earlier messages" }).waitFor({ state: "hidden" });
    // Then down to the bottom: every message once, in order, though never more than a window of them at once.
    const seen: string[] = [];
    const known = new Set<string>();
    for (let step = 0; step < 2000; step++) {
      for (const t of await transcript().locator("article").allInnerTexts()) {
        const text = t.replace(/\s*Rewind to here$/, "");
        if (!known.has(text)) {
          known.add(text);
          seen.push(text);
        }
      }
      most = Math.max(most, await shown());
      const bottom = await scroller.evaluate((el) => {
        el.scrollTop += el.clientHeight;
        return el.scrollTop + el.clientHeight >= el.scrollHeight - 1;
      });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      if (bottom && seen.length >= count) break;
    }
    expect(seen).to.deep.equal(Array.from({ length: count }, (_, i) => `message number ${i}.`));
    expect(most, "articles in the page at once").to.be.below(200);
  });

  /**
   * Opens a session of 600 messages at its bottom, jumps to the top, holds the page of older history that asks for
   * until the row at the top of the view is noted, and checks that this row is the same element at the same place
   * once the page is drawn and measured.
   */
  async function expectOlderPageUnderView(content: (i: number) => string) {
    const id = await d.createSession({ cwd: work });
    const store = d.daemon.services.get(SessionStoreToken);
    await store.appendMessages?.(
      id,
      Array.from({ length: 600 }, (_, i) => ({
        role: i % 2 ? ("assistant" as const) : ("user" as const),
        content: content(i),
      })),
    );
    // The next page of older history waits until the rows on screen are noted.
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const asked = new Promise<void>((resolve) => {
      void page.route(`**/sessions/${id}/history**`, async (route) => {
        resolve();
        await held;
        await route.continue();
      });
    });
    await page.goto(`${d.baseUrl}/#/s/${id}`);
    await transcript()
      .getByText(content(599).split("\n")[0] as string)
      .waitFor();
    await transcript().evaluate((el) => {
      el.scrollTop = 0;
    });
    await asked;
    // The window is drawn around the new view (the first rows) before the rows on screen are noted.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const before = await transcript().evaluate((el) => {
      const top = el.getBoundingClientRect().top;
      const rows = [...el.querySelectorAll("article")];
      const first = rows.find((a) => a.getBoundingClientRect().bottom > top) as HTMLElement;
      (window as unknown as { firstOnScreen: Element }).firstOnScreen = first;
      return { text: first.textContent, y: first.getBoundingClientRect().top, oldest: rows[0]?.textContent };
    });
    release();
    await page.waitForFunction(
      (oldest) =>
        document.querySelector(".transcript article")?.textContent !== oldest || !document.querySelector(".earlier"),
      before.oldest,
    );
    // The rows that came are measured over the next frames: until the scroll position settles.
    await page.waitForFunction(
      () => {
        const w = window as unknown as { last?: string; still?: number };
        const el = document.querySelector(".transcript") as HTMLElement;
        const now = `${el.scrollTop} ${el.scrollHeight}`;
        w.still = w.last === now ? (w.still ?? 0) + 1 : 0;
        w.last = now;
        return w.still >= 5;
      },
      undefined,
      { polling: "raf" },
    );
    const after = await page.evaluate(() => {
      const first = (window as unknown as { firstOnScreen: Element }).firstOnScreen;
      return { inPage: document.contains(first), y: first.getBoundingClientRect().top };
    });
    expect(after.inPage, `the row "${before.text?.slice(0, 40)}" stays the same element`).to.equal(true);
    expect(Math.abs(after.y - before.y), "how far it moved (px)").to.be.below(2);
  }

  it("draws a page of older history above the rows on screen without replacing them or moving them", async () => {
    await expectOlderPageUnderView((i) => `row ${i}.`);
  });

  it("keeps the rows on screen in place when older history arrives after a jump to the top past the whole window", async () => {
    // Tall rows: the rows drawn before the jump are all far below the first rows the jump brings into the window.
    await expectOlderPageUnderView((i) => Array.from({ length: 12 }, (_, k) => `row ${i}, line ${k}.`).join("\n\n"));
    await page.screenshot({ path: join(screenshotDir(), "older-history-tall-rows.png") });
  });

  it("stays where the user scrolled to while an answer streams in below, and follows the bottom again once back there", async () => {
    await openSession();
    const paragraphs: Step[] = Array.from({ length: 60 }, (_, i) => ({ content: `Paragraph ${i}.\n\n` }));
    const trickle: Step[] = Array.from({ length: 800 }, () => ({ content: "more " }));
    let tall!: () => void;
    fake.script({
      steps: [...paragraphs, { waitFor: new Promise<void>((r) => (tall = r)) }, ...trickle, { content: "THE END." }],
      chunkDelayMs: 2,
    });
    await message().fill("write a lot");
    await message().press("Enter");
    await transcript().getByText("Paragraph 59.").waitFor();
    const scroller = transcript();
    const fromBottom = () => scroller.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
    expect(await fromBottom()).to.be.below(80);
    tall();
    // Scrolled up while tokens arrive every few milliseconds: a render between the scroll and its (late) scroll
    // event must not put the view back at the bottom.
    await scroller.hover();
    for (let i = 0; i < 5; i++) await page.mouse.wheel(0, -300);
    await transcript().getByText("THE END.", { exact: false }).waitFor();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    expect(await fromBottom()).to.be.above(600);
    // Back at the bottom, it follows what comes next.
    await scroller.evaluate((el) => {
      el.scrollTop = el.scrollHeight;
    });
    fake.script(text(...Array.from({ length: 40 }, (_, i) => `Next ${i}.\n\n`)));
    await message().fill("and more");
    await message().press("Enter");
    await transcript().getByText("Next 39.").waitFor();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    expect(await fromBottom()).to.be.below(80);
  });

  it("deletes a session after asking", async () => {
    const id = await openSession();
    await d.post(`/sessions/${id}/rename`, { title: "Throwaway" });
    const nav = page.getByRole("navigation", { name: "Sessions" });
    await nav.getByText("Throwaway").waitFor();
    // Asked in the page's own dialog (no browser confirm): Cancel keeps it, Delete session deletes it.
    await page.getByRole("button", { name: "Delete" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete this session?" });
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect((await d.get(`/sessions/${id}`)).status).to.equal(200);
    await page.getByRole("button", { name: "Delete" }).click();
    await dialog.getByRole("button", { name: "Delete session" }).click();
    await nav.getByText("Throwaway").waitFor({ state: "hidden" });
    expect((await d.get(`/sessions/${id}`)).status).to.equal(404);
  });

  it("shows provider errors in the conversation", async () => {
    await openSession();
    fake.script(fail(401, { body: { error: { message: "bad key for this model" } } }));
    await message().fill("hello");
    await message().press("Enter");
    await transcript().locator(".msg.error").waitFor();
    await page.getByRole("button", { name: "Stop" }).waitFor({ state: "hidden" });
  });

  it("settings: a provider that fails verification is not saved; a working one is", async () => {
    await page.goto(`${d.baseUrl}/`);
    await page.getByRole("button", { name: "Settings" }).click();
    const form = page.getByRole("form", { name: "Provider" });
    await form.getByLabel("Base URL").fill("http://127.0.0.1:9/v1");
    await form.getByRole("button", { name: "Verify and save" }).click();
    await form.getByText(/Not saved/).waitFor();
    watch.errors.length = 0; // the refused PUT is the expected 400
    await form.getByLabel("Base URL").fill(fake.url);
    await form.getByLabel("Model").fill("fake-model-2");
    await form.getByRole("button", { name: "Verify and save" }).click();
    await form.getByRole("status").filter({ hasNotText: "Checking" }).filter({ hasNotText: "Not saved" }).waitFor();
    await page.screenshot({ path: join(import.meta.dirname, "../../test-output/screenshots/settings-light.png") });
    const cfg = await d.get("/config");
    expect(cfg.body.model).to.equal("fake-model-2");
    // Theme: dark on request, remembered by the page.
    await page.getByRole("combobox", { name: "Theme" }).selectOption("dark");
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).to.equal("dark");
    await page.reload();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).to.equal("dark");
    expect(readFileSync(join(d.home, "settings.json"), "utf8")).to.not.include("sk-test");
    // A daemon theme paints the page with its colours and becomes the daemon-wide default.
    await page.getByRole("button", { name: "Settings" }).click();
    await page.getByRole("combobox", { name: "Theme" }).selectOption("solarized-light");
    await page.waitForFunction(() => document.documentElement.style.getPropertyValue("--bg") !== "");
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).to.equal("light");
    await page.waitForFunction(async () => (await (await fetch("/api/v1/config")).json()).theme === "solarized-light");
    await page.screenshot({ path: join(import.meta.dirname, "../../test-output/screenshots/settings-solarized.png") });
    // The agent settings show the current values, and a change shows at once.
    const permissions = page.getByRole("combobox", { name: "Default permissions" });
    expect(await permissions.inputValue()).to.equal("default");
    await permissions.selectOption("bypass");
    await page.waitForFunction(async () => (await (await fetch("/api/v1/config")).json()).permissionMode === "bypass");
    expect(await page.getByRole("spinbutton", { name: "Turn cap" }).inputValue()).to.equal(
      String((await d.get("/config")).body.maxTurnIterations),
    );
  });
});
