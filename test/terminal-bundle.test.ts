import { execFile, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "chai";
import { clientEnv } from "./support/cli.js";
import { startTestDaemon, type TestDaemon } from "./support/daemon.js";
import { type FakeProvider, startFakeProvider, text } from "./support/fake-provider.js";
import { requireTmux, TmuxPane } from "./support/tmux.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BUNDLER = fileURLToPath(new URL("../scripts/bundle-terminal.js", import.meta.url));

/**
 * `npm run build` bundles the terminal client (scripts/bundle-terminal.ts) and the CLI runs that bundle. Proven
 * here on a copy of the build that has the CLI, the bundle and node_modules but not the client's separate modules
 * (dist/clients/terminal, dist/clients/api): the commands only work if the bundle is what runs, lazy parts included
 * (the UI for `chat`, the Markdown renderer after the first screen).
 */
describe("terminal client: the bundled build is what the CLI runs", function () {
  this.timeout(40_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let tree: string;
  let cwd: string;
  let main: string;

  before(async () => {
    await promisify(execFile)(process.execPath, [BUNDLER]);
    tree = realpathSync(mkdtempSync(join(tmpdir(), "agentd-bundle-")));
    cpSync(join(ROOT, "package.json"), join(tree, "package.json"));
    symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"), "dir");
    for (const dir of ["host", "core", "clients/terminal.bundle"]) {
      mkdirSync(join(tree, "dist", dir), { recursive: true });
      cpSync(join(ROOT, "dist", dir), join(tree, "dist", dir), { recursive: true });
    }
    main = join(tree, "dist/host/main.js");
    cwd = realpathSync(mkdtempSync(join(tmpdir(), "agentd-bundle-cwd-")));
    fake = await startFakeProvider();
    d = await startTestDaemon({ config: { provider: { baseURL: fake.url, apiKey: "k", model: "fake-model" } } });
  });
  after(async () => {
    await d?.cleanup();
    await fake?.close();
    rmSync(tree, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  });

  it("the copy has no unbundled client modules", () => {
    expect(existsSync(join(tree, "dist/clients/terminal"))).to.equal(false);
    expect(existsSync(join(tree, "dist/clients/api"))).to.equal(false);
    expect(existsSync(join(tree, "dist/clients/terminal.bundle/commands.js"))).to.equal(true);
  });

  const run = async (entry: string, answer: string) => {
    fake.script(text(answer));
    const child = spawn(process.execPath, [entry, "--home", d.home, "run", "--cwd", cwd, "hi"], {
      env: clientEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString();
    });
    child.stderr.on("data", (b: Buffer) => {
      err += b.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code, err).to.equal(0);
    expect(out).to.include(answer);
  };

  it("agentd run streams an answer from the bundle", async () => {
    await run(main, "bundled answer");
  });

  it("a bundle older than the compiled modules (a later bare tsc build) is not used", async () => {
    const stale = join(tree, "stale");
    for (const dir of ["host", "core", "clients/terminal", "clients/api"])
      cpSync(join(ROOT, "dist", dir), join(stale, "dist", dir), { recursive: true });
    cpSync(join(ROOT, "package.json"), join(stale, "package.json"));
    symlinkSync(join(ROOT, "node_modules"), join(stale, "node_modules"), "dir");
    const bundle = join(stale, "dist/clients/terminal.bundle/commands.js");
    mkdirSync(join(stale, "dist/clients/terminal.bundle"));
    writeFileSync(bundle, 'throw new Error("stale bundle loaded");\n');
    utimesSync(bundle, new Date(2000, 0, 1), new Date(2000, 0, 1));
    await run(join(stale, "dist/host/main.js"), "modules answer");
  });

  it("agentd chat measures its first screen without string-width's emoji pattern", async () => {
    // Ink's string-width goes through the client's fast path for its own glyphs (clients/terminal/ui/string-width.ts):
    // the first screen's `›` and `·` never reach string-width's test of each grapheme against its RGI emoji pattern,
    // whose first use costs V8 ~60 ms to compile.
    requireTmux();
    const hook = join(tree, "emoji-pattern-hook.cjs");
    const out = join(tree, "emoji-tests.json");
    writeFileSync(
      hook,
      `const test = RegExp.prototype.test;
let calls = 0;
RegExp.prototype.test = function (s) { if (this.source.includes("RGI_Emoji")) calls++; return test.call(this, s); };
process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(out)}, JSON.stringify({ calls })));`,
    );
    const pane = await TmuxPane.start([process.execPath, main, "--home", d.home, "chat", "--cwd", cwd], {
      cwd,
      width: 100,
      height: 30,
      env: { NODE_OPTIONS: `--require ${hook}` },
    });
    try {
      await pane.waitFor((s) => s.includes("ask anything") && s.includes("· session "));
      await pane.keys("C-c");
      await pane.keys("C-c");
      await pane.waitForExit(20_000);
    } finally {
      await pane.kill();
    }
    expect(JSON.parse(readFileSync(out, "utf8"))).to.deep.equal({ calls: 0 });
  });

  it("agentd chat shows its first screen and renders a Markdown answer from the bundle", async () => {
    requireTmux();
    fake.script(text("The answer is **bold** here.\n\n- one item\n"));
    const pane = await TmuxPane.start([process.execPath, main, "--home", d.home, "chat", "--cwd", cwd], {
      cwd,
      width: 100,
      height: 30,
    });
    try {
      await pane.waitFor((s) => s.includes("ask anything") && s.includes("· session "));
      await pane.type("hello");
      await pane.keys("Enter");
      const screen = await pane.waitFor("one item");
      expect(screen).to.include("The answer is bold here.");
      expect(screen).to.not.include("**bold**");
      await pane.keys("C-c");
      await pane.keys("C-c");
      await pane.waitForExit(20_000);
    } finally {
      await pane.kill();
    }
  });
});
