import { execFile } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { createLogger } from "../host/logger.js";
import { makeTempHome } from "../testing/daemon.js";

const run = promisify(execFile);
const DAEMON = new URL("../host/daemon.js", import.meta.url).href;

describe("daemon log file", () => {
  let home: string;
  beforeEach(() => {
    home = makeTempHome();
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("exits cleanly when the home is removed right after stop()", async function () {
    this.timeout(30_000);
    // A process of its own: the failure was pino's exit hook throwing while the log file was still being opened.
    const script = [
      'import { rmSync } from "node:fs";',
      `import { startDaemon } from ${JSON.stringify(DAEMON)};`,
      "const home = process.argv[1];",
      "for (let i = 0; i < 3; i++) {",
      '  const d = await startDaemon({ home, port: 0, env: { HOME: home, AGENTD_LOG_LEVEL: "info" } });',
      "  await d.stop();",
      "  rmSync(home, { recursive: true, force: true });",
      "}",
      'console.log("done");',
    ].join("\n");
    const { stdout, stderr } = await run(process.execPath, ["--input-type=module", "-e", script, home], {
      env: { PATH: process.env.PATH },
    });
    expect(stdout.trim()).to.equal("done");
    expect(stderr).to.not.include("sonic boom");
  });

  it("has the file open when createLogger returns, and flush writes what was logged", () => {
    const { logger, flush } = createLogger({ home, level: "info", terminal: false });
    const file = join(home, "agentd.log");
    expect(existsSync(file)).to.equal(true);
    logger.info({ token: "secret-value" }, "hello log");
    flush();
    const line = JSON.parse(readFileSync(file, "utf8").trim().split("\n").at(-1) as string);
    expect(line).to.include({ msg: "hello log", token: "[redacted]" });
  });

  it("keeps working without a log file when it cannot be opened", () => {
    // A plain file where the home directory should be: neither it nor the log file can be created.
    const blocked = join(home, "blocked");
    writeFileSync(blocked, "not a directory");
    const { logger, flush } = createLogger({ home: join(blocked, "sub"), level: "info", terminal: false });
    expect(() => {
      logger.info("still fine");
      flush();
    }).to.not.throw();
  });
});
