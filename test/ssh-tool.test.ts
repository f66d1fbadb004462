import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { expect } from "chai";
import { ProjectTrustToken, ToolRegistryToken, type ToolResult } from "../core/index.js";
import { makeTempHome, startTestDaemon } from "../testing/daemon.js";
import { argvOf, builtins, OPENSSH_KEY, recorder, sshFixture, toolCtx } from "./support/ssh.js";

describe("ssh plugin", () => {
  const { fx, run, calls } = sshFixture();

  describe("the ssh tool", () => {
    beforeEach(async () => {
      await fx.d.post("/ssh/key", { name: "deploy", key: OPENSSH_KEY });
      expect(
        (
          await fx.d.post("/ssh/add", {
            name: "web",
            host: "web.example.com",
            user: "deploy",
            port: 2222,
            key: "deploy",
          })
        ).status,
      ).to.equal(200);
      expect((await fx.d.post("/ssh/add", { name: "bare", host: "10.1.2.3" })).status).to.equal(200);
    });

    it("runs ssh with an argument array, after confirming, without the daemon's secrets in its environment", async () => {
      const { asked, confirm } = recorder(true);
      const command = "ls -la; echo $HOME && -oProxyCommand=x";
      const result = await run({ host: "web", command }, toolCtx(fx.project, { confirm }));
      expect(result.isError, result.content).to.not.equal(true);
      const key = join(realpathSync(fx.d.home), "ssh", "keys", "deploy");
      expect(argvOf(result)).to.deep.equal([
        "-p",
        "2222",
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=accept-new",
        "-o",
        "ConnectTimeout=15",
        "-T",
        "-i",
        key,
        "-o",
        "IdentitiesOnly=yes",
        "deploy@web.example.com",
        "--",
        command,
      ]);
      expect(asked).to.have.length(1);
      expect(asked[0]).to.include({ tool: "ssh", command });
      expect(asked[0]?.reason).to.include("web");
      expect(result.content).to.not.include("LEAKED_ENV");
      expect(result.meta).to.include({ host: "web", exitCode: 0 });

      const bare = await run({ host: "bare", command: "uptime" });
      expect(argvOf(bare).slice(-3)).to.deep.equal(["10.1.2.3", "--", "uptime"]);
      expect(argvOf(bare)).to.not.include("-i");
    });

    it("says why a command is dangerous; with confirm: dangerous, asks only for those", async () => {
      const { asked, confirm } = recorder(true);
      await run({ host: "web", command: "rm -rf /var/www" }, toolCtx(fx.project, { confirm }));
      expect(asked[0]?.reason)
        .to.match(/recursive, forced delete/)
        .and.include("web");

      const d2 = await startTestDaemon({
        builtins: builtins(),
        config: { pluginOptions: { ssh: { binary: fx.binary, confirm: "dangerous" } } },
      });
      try {
        await d2.post("/ssh/add", { name: "web", host: "web.example.com" });
        const t = d2.daemon.services.get(ToolRegistryToken).get("ssh") ?? expect.fail("no ssh tool");
        asked.length = 0;
        const deny = recorder(false);
        const safe = await t.execute({ host: "web", command: "uptime" }, toolCtx(fx.project, { confirm }));
        expect(safe.isError, safe.content).to.not.equal(true);
        expect(asked).to.deep.equal([]);
        const risky = await t.execute(
          { host: "web", command: "ls; sudo reboot" },
          toolCtx(fx.project, { confirm: deny.confirm }),
        );
        expect(risky.error?.code).to.equal("permission_denied");
        expect(deny.asked.map((r) => r.command)).to.deep.equal(["ls; sudo reboot"]);
        expect(calls().map((c) => JSON.parse(c).at(-1))).to.deep.equal(["rm -rf /var/www", "uptime"]);
      } finally {
        await d2.cleanup();
      }
    });

    it("asks for every command when no shell classifier service is loaded (tools-shell disabled)", async () => {
      const d2 = await startTestDaemon({
        builtins: builtins(),
        config: {
          disabledPlugins: ["tools-shell"],
          pluginOptions: { ssh: { binary: fx.binary, confirm: "dangerous" } },
        },
      });
      try {
        await d2.post("/ssh/add", { name: "web", host: "web.example.com" });
        const t = d2.daemon.services.get(ToolRegistryToken).get("ssh") ?? expect.fail("no ssh tool");
        const { asked, confirm } = recorder(true);
        const res = await t.execute({ host: "web", command: "uptime" }, toolCtx(fx.project, { confirm }));
        expect(res.isError, res.content).to.not.equal(true);
        expect(asked.map((r) => r.command)).to.deep.equal(["uptime"]);
        expect(asked[0]?.reason).to.match(/tools-shell plugin, which classifies commands, is not loaded/);
      } finally {
        await d2.cleanup();
      }
    });

    it("never runs the command when the user denies it", async () => {
      const result = await run(
        { host: "web", command: "rm -rf /" },
        toolCtx(fx.project, { confirm: async () => false }),
      );
      expect(result.isError).to.equal(true);
      expect(result.error?.code).to.equal("permission_denied");
      expect(calls()).to.deep.equal([]);
    });

    it("answers not_found with the configured names for an unknown host", async () => {
      const result = await run({ host: "nope", command: "id" });
      expect(result.error?.code).to.equal("not_found");
      expect(result.content).to.include("bare").and.include("web");
      expect(calls()).to.deep.equal([]);
    });

    it("reports failures: remote exit codes, connection errors, a missing binary", async () => {
      const failed = await run({ host: "web", command: "fail" });
      expect(failed.error?.code).to.equal("execution_failed");
      expect(failed.content).to.include("boom").and.include("exit code 3");
      const refused = await run({ host: "web", command: "noconnect" });
      expect(refused.error).to.deep.include({ code: "unavailable", retryable: true });
      const d2 = await startTestDaemon({
        home: makeTempHome(),
        builtins: builtins(),
        config: { pluginOptions: { ssh: { binary: join(fx.work, "no-such-ssh") } } },
      });
      try {
        await d2.post("/ssh/add", { name: "web", host: "web.example.com" });
        const t = d2.daemon.services.get(ToolRegistryToken).get("ssh") ?? expect.fail("no ssh tool");
        const missing = await t.execute({ host: "web", command: "id" }, toolCtx(fx.project));
        expect(missing.error?.code).to.equal("unavailable");
        expect(missing.content).to.include("ENOENT");
      } finally {
        await d2.cleanup();
      }
    });

    it("caps the output, keeping its end", async () => {
      const result = await run({ host: "web", command: "big" });
      expect(result.isError, result.content).to.not.equal(true);
      expect(result.content).to.include("END-OF-OUTPUT").and.include("output truncated");
      expect(result.content.length).to.be.below(4096 * 2 + 500);
      expect(result.meta?.truncated).to.equal(true);
    });

    /** Runs `hang` (the fake connects back, then never exits) and ends it with `stop`. */
    async function hangAndStop(stop: (ac: AbortController) => void, timeout?: number): Promise<ToolResult> {
      const server = createServer();
      const connected = new Promise<Socket>((resolve) => server.once("connection", resolve));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const port = (server.address() as AddressInfo).port;
      const ac = new AbortController();
      try {
        const pending = run(
          { host: "web", command: `hang ${port}`, timeout },
          toolCtx(fx.project, { signal: ac.signal }),
        );
        const socket = await connected;
        const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
        socket.resume();
        stop(ac);
        const result = await pending;
        await closed; // the fake ssh process is gone, so its socket closed
        return result;
      } finally {
        server.close();
      }
    }

    it("kills the process when the turn is aborted", async () => {
      const result = await hangAndStop((ac) => ac.abort());
      expect(result.error?.code).to.equal("aborted");
    });

    it("kills the process at its timeout", async () => {
      const result = await hangAndStop(() => {}, 1);
      expect(result.error).to.deep.include({ code: "timeout", retryable: true });
      expect(result.content).to.include("Timed out after 1 s");
    });

    it("uses a project's hosts only when the project is trusted", async () => {
      mkdirSync(join(fx.project, ".agentd"));
      writeFileSync(
        join(fx.project, ".agentd", "ssh.json"),
        JSON.stringify({
          hosts: [
            { name: "proj", host: "10.9.8.7", username: "ci", port: 2200 },
            { name: "evil", host: "-oProxyCommand=x" },
          ],
        }),
      );
      const untrusted = await run({ host: "proj", command: "id" });
      expect(untrusted.error?.code).to.equal("not_found");
      expect(untrusted.meta?.hosts).to.deep.equal(["web", "bare"]);

      await fx.d.daemon.services.get(ProjectTrustToken).set(fx.project, true);
      const trusted = await run({ host: "proj", command: "id" });
      expect(trusted.isError, trusted.content).to.not.equal(true);
      expect(argvOf(trusted)).to.include.members(["-p", "2200", "ci@10.9.8.7"]);
      const evil = await run({ host: "evil", command: "id" });
      expect(evil.error?.code).to.equal("not_found");
      expect(calls()).to.have.length(1);
    });
  });
});
