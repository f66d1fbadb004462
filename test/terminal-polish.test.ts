import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { expect } from "chai";
import { agentd } from "./support/cli.js";
import { makeTempHome } from "./support/daemon.js";
import { fail, text } from "./support/fake-provider.js";
import { AGENTD_MAIN as MAIN, terminalWorld } from "./support/terminal-fixture.js";
import { TmuxPane } from "./support/tmux.js";

/**
 * The terminal client and the CLI where they used to trip a person up: words cut by the terminal, a retry printed once
 * per attempt, a message lost while the daemon was down, a failed turn silent on reopening, and CLI messages that
 * named the wrong cause.
 */
describe("terminal client and CLI: readable errors and kept messages (tmux)", function () {
  this.timeout(40_000);
  const w = terminalWorld();
  const { chat, send } = w;

  it("wraps /help between words at a narrow width", async () => {
    const p = await chat([], 60);
    await send(p, "/help");
    await p.waitFor("/worktree");
    const all = await p.history();
    // Each line ends at a word boundary: none ends with a letter that the next line's first letter continues.
    // The transcript: what is above the composer's rule.
    const lines = all.split("\n").slice(
      0,
      all.split("\n").findIndex((l) => l.startsWith("───")),
    );
    const cut = lines.filter((l, i) => /[a-z]$/.test(l) && /^[a-z]/.test(lines[i + 1] ?? ""));
    expect(cut, cut.join("\n")).to.deep.equal([]);
    for (const l of lines) expect(l.length).to.be.at.most(60);
  });

  it("/model lists the provider's models with the current one marked; a typo is refused", async () => {
    w.fake.setModels(["fake-model", "big-model"]);
    const p = await chat();
    await send(p, "/model");
    const screen = await p.waitFor("Available (2)");
    expect(screen).to.include("● fake-model").and.include("big-model");
    await send(p, "/model big-modle");
    await p.waitFor('Unknown model "big-modle"');
  });

  it("shows provider retries as one line that updates, gone once the call goes through", async () => {
    w.fake.script(
      fail(503, { headers: { "retry-after-ms": "20" } }),
      fail(503, { headers: { "retry-after-ms": "2500" } }),
      text("answer after retries"),
    );
    const p = await chat();
    await send(p, "hello");
    const during = await p.waitFor("retry 2 in");
    expect(during).to.not.include("retry 1 in");
    await p.waitFor("answer after retries");
    expect(await p.history()).to.not.include("provider failed");
  });

  it("keeps a message sent while the daemon is down in the input, to send again", async () => {
    const p = await chat();
    await w.d.stop();
    await p.waitFor("reconnecting");
    await send(p, "please keep this message");
    // The note and the input put back are drawn in two renders: wait for both.
    const inputOf = (screen: string) => screen.split("\n").find((l) => l.startsWith("›")) ?? "";
    const screen = await p.waitFor(
      (s) => s.includes("not sent: the daemon is unreachable") && inputOf(s).includes("please keep this message"),
    );
    expect(inputOf(screen)).to.include("please keep this message");
  });

  it("shows why the last turn failed when the session is opened again", async () => {
    w.fake.script(fail(400, { body: { error: { message: "model does not exist" } } }));
    const p = await chat();
    await send(p, "hello");
    await p.waitFor("model does not exist");
    const id = ((await w.d.get("/sessions")).body as Array<{ id: string }>)[0]?.id as string;
    await p.kill();
    const again = await chat(["--session", id]);
    const screen = await again.waitFor("model does not exist");
    expect(screen).to.include("› hello");
  });

  describe("CLI", () => {
    it("a mistyped command is refused with a suggestion, not sent to the agent", async () => {
      const run = agentd(w.d.home, ["sesions"]);
      expect(await run.exited).to.equal(2);
      expect(run.stderr()).to.include('unknown command "sesions"').and.include("did you mean sessions");
      expect(w.fake.requests).to.have.length(0);
      expect((await w.d.get("/sessions")).body).to.deep.equal([]);
    });

    it("sessions shows idle / running / needs you in STATE", async () => {
      await w.d.createSession({ cwd: w.cwd });
      const list = agentd(w.d.home, ["sessions"], { cwd: w.cwd });
      expect(await list.exited).to.equal(0);
      const row = list.stdout().split("\n")[1] ?? "";
      expect(row).to.match(/^\S+\s+idle\s/);
    });

    it("a token the daemon rejects is reported as such, not as a daemon that exited", async () => {
      const file = join(w.d.home, "server.json");
      const info = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
      writeFileSync(file, JSON.stringify({ ...info, token: "wrong-token-wrong-token" }));
      const run = agentd(w.d.home, ["sessions"]);
      expect(await run.exited).to.equal(1);
      expect(run.stderr()).to.include("rejected the access token").and.include("token");
      expect(run.stderr()).to.not.include("exited with code");
    });

    it("token names the real token file when no daemon runs; a taken port suggests --port 0", async () => {
      const home = makeTempHome();
      try {
        const run = agentd(home, ["token"]);
        expect(await run.exited).to.equal(1);
        expect(run.stderr()).to.include(join(home, "token")).and.not.include("<home>");
        const taken = createServer();
        await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
        const port = (taken.address() as { port: number }).port;
        const serve = agentd(home, ["serve", "--port", String(port)]);
        expect(await serve.exited).to.equal(1);
        expect(serve.stderr()).to.include("EADDRINUSE").and.include("--port 0");
        await new Promise((r) => taken.close(r));
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    });

    it("serve prints readable log lines on a terminal (JSON only to pipes and the log file)", async () => {
      const home = makeTempHome();
      try {
        w.pane = await TmuxPane.start([process.execPath, MAIN, "--home", home, "serve", "--port", "0"], {
          width: 160,
          height: 30,
          env: { AGENTD_LOG_LEVEL: "info" },
        });
        const screen = await w.pane.waitFor("agentd listening");
        expect(screen).to.match(/^\d\d:\d\d:\d\d INFO {2}agentd listening url=http:\/\/127\.0\.0\.1:\d+/m);
        expect(screen).to.not.include('{"level"');
        expect(readFileSync(join(home, "agentd.log"), "utf8")).to.include('"msg":"agentd listening"');
        // Ctrl-C stops it (killing the terminal would only send SIGHUP, which reloads the token).
        await w.pane.keys("C-c");
        await w.pane.waitForExit();
      } finally {
        await w.pane?.kill();
        w.pane = undefined;
        rmSync(home, { recursive: true, force: true });
      }
    });
  });
});
