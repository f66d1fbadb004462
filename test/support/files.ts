import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinSource } from "../../host/plugin-sources.js";
import files from "../../plugins/files/index.js";
import { builtinPlugins } from "../../plugins/index.js";
import { startTestDaemon, type TestDaemon } from "../../testing/daemon.js";

export const MAX_UPLOAD = 64 * 1024;
export const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

export function tempDir(prefix: string): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

export function dataUrl(bytes: Buffer | string, mime = "text/plain"): string {
  return `data:${mime};base64,${Buffer.from(bytes).toString("base64")}`;
}

/** One daemon with the files plugin (a browse root, a directory outside it) for the describe, and a fresh project and session for each test. */
export function filesFixture() {
  const fx = {} as { d: TestDaemon; browseRoot: string; outside: string; cwd: string; id: string };

  before(async () => {
    fx.browseRoot = tempDir("agentd-browse-");
    fx.outside = tempDir("agentd-outside-");
    writeFileSync(join(fx.outside, "secret.txt"), "top secret");
    const withFiles = builtinPlugins.some((p) => p.manifest.id === "files")
      ? builtinPlugins
      : [...builtinPlugins, files];
    fx.d = await startTestDaemon({
      builtins: withFiles.map(builtinSource),
      env: { AGENTD_MODEL: "test-model" },
      config: {
        pluginOptions: { files: { browseRoots: [fx.browseRoot], browseAnywhere: false, maxUploadBytes: MAX_UPLOAD } },
      },
    });
  });
  after(async () => {
    await fx.d.cleanup();
    rmSync(fx.browseRoot, { recursive: true, force: true });
    rmSync(fx.outside, { recursive: true, force: true });
  });
  beforeEach(async () => {
    fx.cwd = tempDir("agentd-files-");
    mkdirSync(join(fx.cwd, "src", "deep"), { recursive: true });
    mkdirSync(join(fx.cwd, ".git"));
    writeFileSync(join(fx.cwd, "README.md"), "# hello\n");
    writeFileSync(join(fx.cwd, "src", "main.ts"), "export {};\n");
    writeFileSync(join(fx.cwd, "src", "deep", "needle.txt"), "x");
    fx.id = await fx.d.createSession({ cwd: fx.cwd });
  });
  afterEach(() => rmSync(fx.cwd, { recursive: true, force: true }));

  async function getBytes(path: string): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
    const res = await fetch(`${fx.d.api}${path}`, { headers: { authorization: `Bearer ${fx.d.token}` } });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  }
  return { fx, getBytes };
}
