/**
 * The web UI in headless Chromium against the real daemon: the JavaScript the first page ships (gzip), the first
 * paint of a 10,000-message session, scrolling up through it (frame times, rows in the page), and long tasks while
 * 2,000 tokens stream at full speed.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { SessionStoreToken } from "../core/index.js";
import { launchBrowser, signIn } from "../test/support/browser.js";
import { type FakeProvider, tokens } from "../test/support/fake-provider.js";
import type { BenchDaemon } from "./lib/daemon.js";
import { int, ms, percentile, printTable, summarize } from "./lib/stats.js";

const WEB = join(import.meta.dirname, "../web");

export interface WebUiResult {
  firstPageGzip: number;
  files: Array<{ file: string; gzip: number }>;
  lazyGzip: number;
  openWarm: number[];
  openCold: number[];
  longTasks: number;
  longestTaskMs: number;
  earlierMessageMutations: number;
  streamMs: number;
  /** Scrolling up through the session, 400 px a frame: each frame's duration, and the most rows in the page. */
  scrollFrames: number[];
  scrollMostRows: number;
  scrolledPx: number;
}

const MESSAGES = 10_000;

/** The entry script, the chunks it imports statically, and the stylesheet: what the first page loads. */
function firstPageFiles(): { first: string[]; lazy: string[] } {
  const manifest = JSON.parse(readFileSync(join(WEB, "manifest.json"), "utf8")) as {
    entry: { js: string; css?: string };
    files: string[];
  };
  const first = new Set<string>([manifest.entry.js]);
  const queue = [manifest.entry.js];
  while (queue.length) {
    const src = readFileSync(join(WEB, queue.pop() as string), "utf8");
    for (const m of src.matchAll(/(?:from|import)\s*"\.\/([\w.-]+\.js)"/g)) {
      const f = m[1] as string;
      if (!first.has(f)) {
        first.add(f);
        queue.push(f);
      }
    }
  }
  if (manifest.entry.css) first.add(manifest.entry.css);
  const lazy = manifest.files.filter((f) => f.endsWith(".js") && !first.has(f));
  return { first: [...first], lazy };
}

const gz = (f: string) => gzipSync(readFileSync(join(WEB, f)), { level: 9 }).length;

async function seed(bd: BenchDaemon, id: string, count: number): Promise<void> {
  const store = bd.daemon.services.get(SessionStoreToken);
  const messages = Array.from({ length: count }, (_, i) => {
    const user = i % 2 === 0;
    const content = user
      ? `Please look at src/module${i % 50}.ts and refactor the parser (${i}).`
      : `Message ${i}: the **parser** in \`module${i % 50}.ts\` drops a token.\n\n\`\`\`ts\nfor (let i = 0; i < tokens.length; i++) out.push(parse(tokens[i]));\n\`\`\`\n\n- check the bound\n- add a test\n`;
    return { role: user ? ("user" as const) : ("assistant" as const), content };
  });
  if (store.appendMessages) await store.appendMessages(id, messages);
  else for (const m of messages) await store.appendMessage(id, m);
}

export async function webUiBench(fake: FakeProvider, bd: BenchDaemon, cwd: string, reps: number): Promise<WebUiResult> {
  const { first, lazy } = firstPageFiles();
  const files = first.map((file) => ({ file, gzip: gz(file) }));
  const result: WebUiResult = {
    firstPageGzip: files.reduce((n, f) => n + f.gzip, 0),
    files,
    lazyGzip: lazy.reduce((n, f) => n + gz(f), 0),
    openWarm: [],
    openCold: [],
    longTasks: 0,
    longestTaskMs: 0,
    earlierMessageMutations: 0,
    streamMs: 0,
    scrollFrames: [],
    scrollMostRows: 0,
    scrolledPx: 0,
  };
  const browser = await launchBrowser();
  try {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await ctx.newPage();
    await signIn(page, bd.daemon.url, bd.daemon.info.token);
    const big = (await bd.api.post<{ id: string }>("/sessions", { cwd })).body.id;
    await seed(bd, big, MESSAGES);
    const lastText = `Message ${MESSAGES - 1}:`;
    // Cold: a fresh page load straight into the session, navigation start to the latest message painted.
    // (A goto that only changes the fragment does not reload the page, so every rep reloads explicitly.)
    await page.goto(`${bd.daemon.url}/#/s/${big}`);
    for (let i = 0; i < reps; i++) {
      await page.reload();
      await page.waitForFunction((t) => document.querySelector(".transcript")?.textContent?.includes(t), lastText);
      result.openCold.push(
        await page.evaluate(() => new Promise<number>((r) => requestAnimationFrame(() => r(performance.now())))),
      );
    }
    // Warm: the app is up; the user picks the session in the list (from another, empty one).
    const other = (await bd.api.post<{ id: string }>("/sessions", { cwd })).body.id;
    for (let i = 0; i < reps; i++) {
      await page.evaluate((id) => {
        location.hash = `#/s/${id}`;
      }, other);
      await page.getByRole("textbox", { name: "Message" }).waitFor();
      const t = await page.evaluate(
        ([id, text]) =>
          new Promise<number>((resolve) => {
            const t0 = performance.now();
            const done = () => requestAnimationFrame(() => resolve(performance.now() - t0));
            const mo = new MutationObserver(() => {
              if (document.querySelector(".transcript")?.textContent?.includes(text as string)) {
                mo.disconnect();
                done();
              }
            });
            mo.observe(document.body, { childList: true, subtree: true, characterData: true });
            location.hash = `#/s/${id}`;
          }),
        [big, lastText],
      );
      result.openWarm.push(t);
    }
    // Scrolling up through the session as a reader would, 400 px a frame for 3 s (older pages come in on the way):
    // how long each frame took, and how many rows the page held at most.
    const scroll = await page.evaluate(async () => {
      const el = document.querySelector(".transcript") as HTMLElement;
      const frames: number[] = [];
      let most = 0;
      let moved = 0;
      let last = await new Promise<number>((r) => requestAnimationFrame(r));
      for (let i = 0; i < 180; i++) {
        const before = el.scrollTop;
        el.scrollTop -= 400;
        moved += before - el.scrollTop;
        const t = await new Promise<number>((r) => requestAnimationFrame(r));
        frames.push(t - last);
        last = t;
        most = Math.max(most, document.querySelectorAll(".transcript article").length);
      }
      return { frames, most, moved };
    });
    result.scrollFrames = scroll.frames;
    result.scrollMostRows = scroll.most;
    result.scrolledPx = scroll.moved;
    await page.evaluate(() => {
      const el = document.querySelector(".transcript") as HTMLElement;
      el.scrollTop = el.scrollHeight;
    });
    // Streaming: 2,000 tokens at full speed into an open session; long tasks and changes to earlier messages.
    await page.evaluate(() => {
      const w = window as unknown as { __long: number[]; __mut: number };
      w.__long = [];
      w.__mut = 0;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) w.__long.push(e.duration);
      }).observe({ type: "longtask", buffered: false });
      const earlier = document.querySelectorAll(".transcript article.msg");
      const mo = new MutationObserver((records) => {
        for (const r of records) {
          for (const a of earlier) if (a.contains(r.target)) w.__mut++;
        }
      });
      mo.observe(document.querySelector(".transcript") as Node, {
        childList: true,
        subtree: true,
        characterData: true,
      });
    });
    // Self-check of the observer: one deliberate 80 ms task must be seen (and is not counted below).
    const probe = await page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          const po = new PerformanceObserver((list) => {
            po.disconnect();
            resolve(list.getEntries().length);
          });
          po.observe({ type: "longtask" });
          setTimeout(() => resolve(0), 3000);
          // A task of the page itself (tasks started by the DevTools protocol are not reported).
          setTimeout(() => {
            const t = performance.now();
            while (performance.now() - t < 80) {
              // busy on purpose
            }
          }, 0);
        }),
    );
    if (probe < 1) throw new Error("the long-task observer saw no deliberate long task");
    await page.evaluate(() => {
      (window as unknown as { __long: number[] }).__long = [];
    });
    fake.script(tokens(2000));
    const t0 = Date.now();
    await bd.api.post(`/sessions/${big}/chat`, { text: "stream 2,000 tokens" });
    await page.getByRole("button", { name: "Stop" }).waitFor({ state: "hidden", timeout: 60_000 });
    await page.waitForFunction(() => document.querySelectorAll(".turn-footer").length > 0);
    result.streamMs = Date.now() - t0;
    const stats = await page.evaluate(() => {
      const w = window as unknown as { __long: number[]; __mut: number };
      return { long: w.__long, mut: w.__mut };
    });
    result.longTasks = stats.long.filter((d) => d > 50).length;
    result.longestTaskMs = Math.max(0, ...stats.long);
    result.earlierMessageMutations = stats.mut;
    await ctx.close();
  } finally {
    await browser.close();
  }
  return result;
}

export function printWebUi(r: WebUiResult): void {
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  const warm = summarize(r.openWarm);
  const cold = summarize(r.openCold);
  const scroll = summarize(r.scrollFrames);
  const p95 = percentile(Float64Array.from(r.scrollFrames).sort(), 95);
  printTable(
    "6. Web UI (headless Chromium, the real daemon)",
    ["figure", "value", "bar"],
    [
      ...r.files.map((f) => [`first page: ${f.file} (gzip)`, kb(f.gzip), ""]),
      ["JavaScript + CSS for the first page (gzip)", kb(r.firstPageGzip), "<= 150 KB"],
      ["loaded on first use: highlighter (gzip)", kb(r.lazyGzip), ""],
      [
        "open a 10,000-message session from the list: latest messages painted, p50 / max",
        `${ms(warm.p50)} / ${ms(warm.max)}`,
        "<= 150 ms",
      ],
      ["page load into that session: navigation start to latest messages painted, p50", ms(cold.p50), ""],
      [
        `scrolling up ${int(r.scrolledPx)} px, 400 px a frame: frame p50 / p95 / max`,
        `${ms(scroll.p50)} / ${ms(p95)} / ${ms(scroll.max)}`,
        "p95 <= 16.7 ms (60 fps)",
      ],
      [
        "scrolling: frames that missed a vsync (longer than 25 ms)",
        `${int(r.scrollFrames.filter((f) => f > 25).length)} of ${int(r.scrollFrames.length)}`,
        "under 5%",
      ],
      ["scrolling: most message rows in the page at once", int(r.scrollMostRows), "bounded (virtualised)"],
      ["2,000 tokens at full speed: long tasks over 50 ms", int(r.longTasks), "0"],
      ["2,000 tokens: longest task over 50 ms", r.longestTaskMs ? ms(r.longestTaskMs) : "none", "none"],
      ["2,000 tokens: DOM changes to earlier messages", int(r.earlierMessageMutations), "0 (appended only)"],
      ["2,000 tokens: chat POST to turn shown as finished", ms(r.streamMs), ""],
    ],
    ["Medians of the runs; the browser shares the 2 CPUs with the daemon and the fake provider."],
  );
}
