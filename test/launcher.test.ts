import { execFile, spawn } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "chai";
import { clientEnv } from "./support/cli.js";

/** The `agentd` command (package.json "bin", host/agentd.cts) and the launcher `npm run build` writes beside it. */
const HOST = fileURLToPath(new URL("../host/", import.meta.url));
const BIN = join(HOST, "agentd.cjs");
const run = promisify(execFile);

/**
 * `agentd serve` started by `entry` with a preloaded hook that, on SIGUSR2 (sent once `server.json` is written, before
 * any request), writes whether node had loaded an ES module by then (`module_job`: an ES module linked and run; a
 * CommonJS `require` of a package with "exports" loads the loader's resolver, not this).
 */
async function esModuleAtStart(entry: string): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), "agentd-launcher-"));
  const hook = join(dir, "hook.cjs");
  const out = join(dir, "seen.json");
  writeFileSync(
    hook,
    `process.on("SIGUSR2", () => {
  const seen = process.moduleLoadList.includes("NativeModule internal/modules/esm/module_job");
  require("node:fs").writeFileSync(${JSON.stringify(`${out}.tmp`)}, JSON.stringify(seen));
  require("node:fs").renameSync(${JSON.stringify(`${out}.tmp`)}, ${JSON.stringify(out)});
});`,
  );
  const home = join(dir, "home");
  const child = spawn(process.execPath, [entry, "serve", "--port", "0", "--home", home], {
    env: clientEnv({ NODE_OPTIONS: `--require ${hook}` }),
    stdio: "ignore",
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  // Other processes write these files: poll them, within a bound.
  const appears = async (file: string) => {
    for (let i = 0; i < 600 && !existsSync(file) && child.exitCode === null; i++) await sleep(25);
    if (!existsSync(file)) throw new Error(`${file} was not written (exit ${child.exitCode})`);
  };
  try {
    await appears(join(home, "server.json"));
    child.kill("SIGUSR2");
    await appears(out);
    return JSON.parse(readFileSync(out, "utf8")) as boolean;
  } finally {
    child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the agentd command's launcher (npm run build: dist/host/cli.cjs)", () => {
  it("starts `agentd serve` without loading an ES module; the compiled CLI loads several", async () => {
    expect(existsSync(join(HOST, "cli.cjs")), "npm run build writes the launcher").to.equal(true);
    expect(await esModuleAtStart(BIN)).to.equal(false);
    // Control: the compiled CLI (main.js and the bundle's ES module entries) on the same path.
    expect(await esModuleAtStart(join(HOST, "main.js"))).to.equal(true);
  });

  it("runs the launcher while it is the newer, else the compiled CLI (a bare tsc after the build)", async () => {
    // The bin beside stand-ins of both that say which of them ran.
    const dir = mkdtempSync(join(tmpdir(), "agentd-bin-"));
    try {
      mkdirSync(join(dir, "host"));
      const bin = join(dir, "host", "agentd.cjs");
      copyFileSync(BIN, bin);
      const cli = join(dir, "host", "cli.cjs");
      const main = join(dir, "host", "main.js");
      writeFileSync(main, 'console.log("compiled CLI", process.argv.slice(2).join(" "));\n');
      const ran = async () => (await run(process.execPath, [bin, "--version"])).stdout.trim();
      expect(await ran(), "no launcher").to.equal("compiled CLI --version");
      writeFileSync(cli, 'console.log("launcher", process.argv.slice(2).join(" "));\n');
      const at = (file: string, s: number) => utimesSync(file, s, s);
      at(main, 1_000);
      at(cli, 2_000);
      expect(await ran(), "launcher newer").to.equal("launcher --version");
      at(main, 3_000);
      expect(await ran(), "compiled CLI newer").to.equal("compiled CLI --version");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
