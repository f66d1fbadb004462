import { execFile } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "chai";
import { makeTempHome, spawnDaemon } from "../testing/daemon.js";

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL("../host/main.js", import.meta.url));

const cli = (home: string, ...args: string[]) => cliWith({}, home, ...args);

async function cliWith(
  env: Record<string, string>,
  home: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, "--home", home, ...args], {
      env: { PATH: process.env.PATH, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("CLI and process lifecycle", () => {
  let home: string;
  beforeEach(() => {
    home = makeTempHome();
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("serve writes server.json (0600) once listening; status and stop work; the token persists", async () => {
    const p = await spawnDaemon(home);
    const file = join(home, "server.json");
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    expect(statSync(join(home, "token")).mode & 0o777).to.equal(0o600);
    expect(p.info).to.include.keys("pid", "host", "port", "url", "token", "instanceId", "startedAt", "version");
    expect(p.info.pid).to.equal(p.child.pid);
    const res = await p.client.get("/server/identity");
    expect(res.body.instanceId).to.equal(p.info.instanceId);

    const st = await cli(home, "status");
    expect(st.code).to.equal(0);
    expect(st.stdout).to.match(/running: pid \d+/);
    const stop = await cli(home, "stop");
    expect(stop.stdout).to.match(/stopped/);
    expect(await p.exited).to.equal(0);
    expect(existsSync(file)).to.equal(false);
    expect((await cli(home, "status")).code).to.equal(3);

    const p2 = await spawnDaemon(home);
    expect(p2.info.token).to.equal(p.info.token);
    expect(p2.info.instanceId).to.not.equal(p.info.instanceId);
    p2.child.kill("SIGINT");
    expect(await p2.exited).to.equal(0);
    expect(existsSync(file)).to.equal(false);
  });

  it("rotates the token; the running daemon picks it up", async () => {
    const p = await spawnDaemon(home);
    const rot = await cli(home, "token", "--rotate");
    expect(rot.code).to.equal(0);
    const fresh = readFileSync(join(home, "token"), "utf8").trim();
    expect(fresh).to.not.equal(p.info.token);
    // The daemon reloads on SIGHUP and rewrites server.json with the new token.
    for (let i = 0; i < 100 && JSON.parse(readFileSync(join(home, "server.json"), "utf8")).token !== fresh; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await p.client.get("/server/status")).status).to.equal(401);
    p.client.token = fresh;
    expect((await p.client.get("/server/status")).status).to.equal(200);
    p.child.kill("SIGTERM");
    expect(await p.exited).to.equal(0);
  });

  it("refuses a second daemon on the same home and reports invalid config readably", async () => {
    const p = await spawnDaemon(home);
    const second = await cli(home, "serve", "--port", "0");
    expect(second.code).to.equal(1);
    expect(second.stderr).to.match(/already running/);
    p.child.kill("SIGTERM");
    await p.exited;
    const bad = await cli(home, "serve", "--port", "99999");
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.match(/port/);
  });

  it("status, token and stop start without the daemon's modules or its config's schemas, commander required", async () => {
    // Node's module loaders say what they load (stderr).
    const debug = { NODE_DEBUG: "module,esm" };
    const results = [
      await cliWith(debug, home, "status"),
      await cliWith(debug, home, "token"),
      await cliWith(debug, home, "stop"),
    ];
    expect(results.map((r) => r.code)).to.deep.equal([3, 1, 0]);
    expect(results[0]?.stdout).to.include("not running");
    for (const r of results) {
      expect(r.stderr).to.include("host/state.js");
      expect(r.stderr).to.not.match(/host\/config\.js|host\/daemon\.js|bundle\/runtime|@sinclair\/typebox/);
      // commander (CommonJS) is required, not translated for the ES module loader.
      expect(r.stderr).to.include("node_modules/commander/index.js");
      expect(r.stderr).to.not.match(/ESM.*node_modules\/commander/);
    }
  });

  it("never writes the token or the API key to the log", async () => {
    const p = await spawnDaemon(home, { OPENAI_API_KEY: "sk-secret-key-123456", AGENTD_LOG_LEVEL: "trace" });
    await p.client.get("/server/status");
    await p.client.get("/server/status", { auth: "wrong" });
    p.child.kill("SIGTERM");
    await p.exited;
    const log = readFileSync(join(home, "agentd.log"), "utf8");
    expect(log).to.include("agentd listening");
    expect(log).to.not.include(p.info.token);
    expect(log).to.not.include("sk-secret-key-123456");
  });
});
