import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import type { Page } from "playwright-core";
import { screenshotDir } from "./support/browser.js";
import { gitIn, makeRepo, repoState } from "./support/git-repo.js";
import { webWorld } from "./support/web-fixture.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

/** The web UI's worktree controls: the branch in the header, the diff, Merge, Discard, grouping, the new-session option. */
describe("web UI: a session's worktree (headless Chromium)", function () {
  this.timeout(60_000);
  const w = webWorld();
  const SHOTS = screenshotDir();
  let repo: string;
  /** Native dialogs (alert, confirm) the page opened: there must be none. */
  let nativeDialogs: string[];
  beforeEach(() => {
    repo = makeRepo({ "x.txt": "x\n", "readme.md": "# demo\n" }, "agentd-web-wt-");
    nativeDialogs = [];
    w.page.on("dialog", (d) => {
      nativeDialogs.push(d.message());
      void d.dismiss();
    });
  });
  afterEach(() => {
    rmSync(repo, { recursive: true, force: true });
    expect(nativeDialogs).to.deep.equal([]);
  });

  async function worktreeSession(body: Json = {}): Promise<{ id: string; wt: Json }> {
    const r = await w.d.post<Json>("/sessions", { cwd: repo, worktree: true, ...body });
    expect(r.status, r.text).to.equal(201);
    return { id: r.body.id, wt: r.body.session.worktree };
  }
  const open = async (id: string, page: Page = w.page) => {
    await page.goto(`${w.d.baseUrl}/#/s/${id}`);
    await page.locator(".session-head").waitFor();
  };
  const chip = (branch: string, page: Page = w.page) =>
    page.locator(".session-head").getByRole("button", { name: `Worktree branch ${branch}` });

  it("the new-session form makes a session in a new worktree on the branch given", async () => {
    await w.page.goto(`${w.d.baseUrl}/`);
    await w.page.getByRole("navigation", { name: "Sessions" }).getByRole("button", { name: "New session" }).click();
    const form = w.page.getByRole("form", { name: "New session" });
    await form.getByLabel("Working directory").fill(repo);
    await form.getByLabel("In a new worktree").check();
    await form.getByLabel("Branch", { exact: true }).fill("web-feature");
    await form.getByRole("button", { name: "Create session" }).click();
    await chip("web-feature").waitFor();
    const [s] = (await w.d.get<Json[]>("/sessions")).body;
    expect(s.worktree).to.include({ branch: "web-feature", base: "main", repository: repo });
    expect(gitIn(repo, "worktree", "list")).to.include(s.worktree.path);
  });

  it("the form says why when the directory is not in git, and nothing is made", async () => {
    const count = (await w.d.get<Json[]>("/sessions")).body.length;
    await w.page.goto(`${w.d.baseUrl}/`);
    await w.page.getByRole("navigation", { name: "Sessions" }).getByRole("button", { name: "New session" }).click();
    const form = w.page.getByRole("form", { name: "New session" });
    await form.getByLabel("Working directory").fill(w.work);
    await form.getByLabel("In a new worktree").check();
    await form.getByRole("button", { name: "Create session" }).click();
    await form.getByRole("alert").filter({ hasText: /git/i }).waitFor();
    expect((await w.d.get<Json[]>("/sessions")).body).to.have.length(count);
    // The refusal (400) is what the test provoked.
    expect(w.watch.errors.splice(0)).to.have.length(1);
  });

  it("shows the branch and the diff against the base; Merge brings the work into main", async () => {
    const { id, wt } = await worktreeSession();
    writeFileSync(join(wt.path, "new.txt"), "hello from the worktree\n");
    writeFileSync(join(wt.path, "x.txt"), "x changed\n");
    await open(id);
    await chip(`agentd/${id}`).click();
    const panel = w.page.getByRole("region", { name: "Worktree" });
    const diff = panel.getByRole("region", { name: "Changes against main" });
    await diff.locator("details").nth(1).waitFor();
    expect(await diff.locator("summary").allTextContents()).to.deep.equal(["new.txt added", "x.txt modified"]);
    expect(await diff.locator(".add").allInnerTexts()).to.include.members(["+hello from the worktree", "+x changed"]);
    expect(await diff.locator(".del").allInnerTexts()).to.include("-x");
    await panel.getByRole("button", { name: "Merge into main" }).click();
    await w.page.getByRole("status").filter({ hasText: "Merged into main (fast-forward, 2 file(s))." }).waitFor();
    expect(readFileSync(join(repo, "new.txt"), "utf8")).to.equal("hello from the worktree\n");
    await panel.getByText("No changes against main yet").waitFor();
  });

  it("a conflicting merge lists the conflicting files and leaves the repository as it was", async () => {
    const { id, wt } = await worktreeSession();
    writeFileSync(join(wt.path, "x.txt"), "from the session\n");
    writeFileSync(join(repo, "x.txt"), "from main\n");
    gitIn(repo, "commit", "-q", "-am", "x on main");
    const before = repoState(repo);
    await open(id);
    await w.page.locator(".session-head").getByRole("button", { name: "Merge…" }).click();
    const panel = w.page.getByRole("region", { name: "Worktree" });
    await panel.locator("details").first().waitFor();
    await panel.getByRole("button", { name: "Merge into main" }).click();
    const alert = panel.getByRole("alert");
    await alert.getByText("The merge was refused: these files conflict. Nothing was changed.").waitFor();
    expect(await alert.getByRole("list", { name: "Conflicting files" }).locator("li").allInnerTexts()).to.deep.equal([
      "x.txt",
    ]);
    expect(repoState(repo)).to.equal(before);
    expect(readFileSync(join(wt.path, "x.txt"), "utf8")).to.equal("from the session\n");
    // The 409 is the refusal the test provoked.
    expect(w.watch.errors.splice(0)).to.deep.equal([
      `HTTP 409 POST ${w.d.baseUrl}/api/v1/sessions/${id}/worktree/merge`,
    ]);
  });

  it("Discard asks in the page's own dialog; Cancel keeps the worktree, confirming removes it", async () => {
    const { id, wt } = await worktreeSession({ worktree: { branch: "throwaway" } });
    await open(id);
    const head = w.page.locator(".session-head");
    await head.getByRole("button", { name: "Discard worktree" }).click();
    const dialog = w.page.getByRole("dialog", { name: "Discard this worktree?" });
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    expect(existsSync(wt.path)).to.equal(true);
    await head.getByRole("button", { name: "Discard worktree" }).click();
    await dialog.getByRole("button", { name: "Discard worktree" }).click();
    await chip("throwaway").waitFor({ state: "detached" });
    await head.getByText(repo, { exact: false }).waitFor();
    expect(existsSync(wt.path)).to.equal(false);
    expect(gitIn(repo, "branch", "--list")).to.not.include("throwaway");
    expect((await w.d.get<Json>(`/sessions/${id}`)).body.worktree).to.equal(undefined);
  });

  it("groups the session list by repository, a worktree session with its repository", async () => {
    const other = makeRepo({ "a.txt": "a\n" }, "agentd-web-other-");
    try {
      const plain = await w.d.createSession({ cwd: repo });
      await w.d.post(`/sessions/${plain}/rename`, { title: "Plain session" });
      const { id } = await worktreeSession({ worktree: { branch: "side-work" } });
      await w.d.post(`/sessions/${id}/rename`, { title: "Worktree session" });
      const o = await w.d.createSession({ cwd: other });
      await w.d.post(`/sessions/${o}/rename`, { title: "Other repository" });
      await w.page.goto(`${w.d.baseUrl}/`);
      const nav = w.page.getByRole("navigation", { name: "Sessions" });
      const mine = nav.getByRole("region", { name: repo.split("/").at(-1) as string });
      await mine.getByText("Worktree session").waitFor();
      expect(await mine.locator("li .title").allInnerTexts()).to.deep.equal(["Worktree session", "Plain session"]);
      expect(await mine.locator("li", { hasText: "Worktree session" }).locator(".sub").innerText()).to.match(
        /^⎇ side-work · /,
      );
      const theirs = nav.getByRole("region", { name: other.split("/").at(-1) as string });
      expect(await theirs.locator("li .title").allInnerTexts()).to.deep.equal(["Other repository"]);
      // The most recent group first (the suite's earlier sessions come after).
      expect((await nav.locator("h2.group").allTextContents()).slice(0, 2)).to.deep.equal([
        other.split("/").at(-1),
        repo.split("/").at(-1),
      ]);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it("the header with a worktree at desktop and phone width (screenshots)", async () => {
    const { id, wt } = await worktreeSession({ worktree: { branch: "feature/login-form" } });
    await w.d.post(`/sessions/${id}/rename`, { title: "Fix the login form" });
    writeFileSync(join(wt.path, "readme.md"), "# demo\n\nThe login form checks the e-mail address.\n");
    await open(id);
    await chip("feature/login-form").waitFor();
    await w.page.screenshot({ path: join(SHOTS, "desktop-worktree-header.png") });
    await chip("feature/login-form").click();
    await w.page.getByRole("region", { name: "Worktree" }).locator("details .add").first().waitFor();
    await w.page.screenshot({ path: join(SHOTS, "desktop-worktree-panel.png") });

    const phone = await w.browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    try {
      await phone.addCookies(await w.ctx.cookies());
      const p = await phone.newPage();
      await open(id, p);
      const head = p.locator(".session-head");
      await chip("feature/login-form", p).waitFor();
      // One row, the chip inside the screen; Merge and Discard are in the ⋯ menu.
      expect((await head.boundingBox())?.height).to.be.lessThan(60);
      const box = await chip("feature/login-form", p).boundingBox();
      expect((box?.x ?? 0) + (box?.width ?? 0)).to.be.at.most(390);
      await p.screenshot({ path: join(SHOTS, "phone-worktree-header.png") });
      await head.getByRole("button", { name: "More session actions" }).click();
      const menu = p.getByRole("menu", { name: "Session actions menu" });
      await menu.getByRole("menuitem", { name: "Discard worktree" }).waitFor();
      await menu.getByRole("menuitem", { name: "Merge…" }).click();
      await p.getByRole("region", { name: "Worktree" }).locator("details .add").first().waitFor();
      await p.screenshot({ path: join(SHOTS, "phone-worktree-panel.png") });
    } finally {
      await phone.close();
    }
  });
});
