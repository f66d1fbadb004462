import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { attachDaemon } from "../clients/api/daemon.js";
import { agentd } from "./support/cli.js";
import { makeTempHome } from "./support/daemon.js";
import { type FakeProvider, startFakeProvider, text } from "./support/fake-provider.js";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** clients/api attachDaemon: discovery through server.json, background start under a lock, reuse. */
describe("clients: attaching to the daemon of a home", function () {
  this.timeout(60_000);
  let home: string;
  let fake: FakeProvider;

  beforeEach(async () => {
    fake = await startFakeProvider();
    home = makeTempHome("agentd-attach-");
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({ server: { port: 0 }, provider: { baseURL: fake.url, apiKey: "k", model: "m" } }),
    );
  });
  afterEach(async () => {
    try {
      const { pid } = JSON.parse(readFileSync(join(home, "server.json"), "utf8")) as { pid: number };
      process.kill(pid, "SIGTERM");
      // The daemon is another process: poll until it is gone.
      const deadline = Date.now() + 15_000;
      while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    } catch {
      // no daemon was started
    }
    rmSync(home, { recursive: true, force: true });
    await fake.close();
  });

  const serverPid = () => (JSON.parse(readFileSync(join(home, "server.json"), "utf8")) as { pid: number }).pid;

  it("agentd run starts a background daemon when none runs, and the next run reuses it", async () => {
    fake.script(text("one"), text("two"));
    const first = agentd(home, ["run", "--cwd", home, "hello"]);
    expect(await first.exited).to.equal(0);
    expect(first.stdout()).to.equal("one\n");
    const pid = serverPid();
    expect(alive(pid)).to.equal(true);
    const second = agentd(home, ["run", "--cwd", home, "again"]);
    expect(await second.exited).to.equal(0);
    expect(second.stdout()).to.equal("two\n");
    expect(serverPid()).to.equal(pid);
    expect(readFileSync(join(home, "daemon.log"), "utf8").match(/listening on/g)).to.have.length(1);
  });

  it("two clients attaching at once start exactly one daemon", async () => {
    const [a, b] = await Promise.all([attachDaemon({ home }), attachDaemon({ home })]);
    expect([a.started, b.started].filter(Boolean)).to.have.length(1);
    expect(a.url).to.equal(b.url);
    const procs = [agentd(home, ["sessions", "--json"]), agentd(home, ["sessions", "--json"])];
    expect(await Promise.all(procs.map((p) => p.exited))).to.deep.equal([0, 0]);
    expect(readFileSync(join(home, "daemon.log"), "utf8").match(/listening on/g)).to.have.length(1);
    const again = await attachDaemon({ home });
    expect(again.started).to.equal(false);
    expect(again.url).to.equal(a.url);
  });

  it("two CLI processes in a fresh home start exactly one daemon", async () => {
    const procs = [agentd(home, ["sessions"]), agentd(home, ["sessions"])];
    expect(await Promise.all(procs.map((p) => p.exited))).to.deep.equal([0, 0]);
    expect(readFileSync(join(home, "daemon.log"), "utf8").match(/listening on/g)).to.have.length(1);
    expect(alive(serverPid())).to.equal(true);
  });

  it("with start: false, says clearly that no daemon runs", async () => {
    let error: Error | undefined;
    await attachDaemon({ home, start: false }).catch((e: Error) => {
      error = e;
    });
    expect(error?.message).to.match(/no agentd daemon is running/);
  });
});
