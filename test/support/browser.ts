import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

/**
 * Headless Chromium for the web UI's tests: Debian's `chromium` (apt), driven by playwright-core. There is no
 * silent skip: without a browser these tests fail and say how to install one (`.ci/run` installs it with apt).
 */
export function findChromium(): string {
  const candidates = [process.env.AGENTD_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].filter(
    (p): p is string => Boolean(p),
  );
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new Error(
      `No Chromium found (looked at ${candidates.join(", ")}). Install it with \`apt-get install -y chromium\` ` +
        "or point AGENTD_CHROMIUM at a Chromium binary.",
    );
  }
  return found;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: findChromium(),
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-dev-shm-usage",
    ],
  });
}

/** Collects page errors, CSP violations reported to the console and failed requests, so a test can assert there were none. */
export function watchPage(page: Page): { errors: string[] } {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(`console: ${m.text()}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400) errors.push(`HTTP ${r.status()} ${r.request().method()} ${r.url()}`);
  });
  return { errors };
}

/** Signs a page in through the real /login form, as a person would. */
export async function signIn(page: Page, baseUrl: string, token: string): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.getByLabel("Access token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Sessions" }).waitFor();
}

/** Where browser tests write their screenshots (made on first use). */
export function screenshotDir(): string {
  const dir = join(import.meta.dirname, "../../../test-output/screenshots");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A context of the given viewport, signed in once through the real /login form; its pages share the cookie. */
export async function signedInContext(
  browser: Browser,
  baseUrl: string,
  token: string,
  viewport = { width: 1440, height: 900 },
): Promise<BrowserContext> {
  const ctx = await browser.newContext({ viewport });
  ctx.setDefaultTimeout(15_000);
  const p = await ctx.newPage();
  await signIn(p, baseUrl, token);
  await p.close();
  return ctx;
}
