import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import type { AddressInfo } from "node:net";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import {
  type ConfirmationRequest,
  definePlugin,
  type Plugin,
  type ProjectTrust,
  ProjectTrustToken,
  type ToolContext,
  type ToolDefinition,
  ToolRegistryToken,
  type ToolResult,
  toDisposable,
} from "../core/index.js";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import sshPlugin, { normalisePrivateKey, sanitiseKeyName } from "../plugins/ssh/index.js";
import { makeTempHome, startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools } from "../testing/fake-provider.js";

const MARKER = "S2V5Qm9keVNlY3JldE1hcmtlcjEyMzQ1Njc4OQ";
const OPENSSH_KEY = [
  "-----BEGIN OPENSSH PRIVATE KEY-----",
  "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
  `${MARKER}QyNTUxOQAAACBdGVzdGtleWJvZHk=`,
  "-----END OPENSSH PRIVATE KEY-----",
].join("\r\n");
const ENCRYPTED_RSA = [
  "-----BEGIN RSA PRIVATE KEY-----",
  "Proc-Type: 4,ENCRYPTED",
  "DEK-Info: AES-128-CBC,2A9B7C5D6E3F1A0B2C4D6E8F0A1B3C5D",
  "",
  "MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
  "-----END RSA PRIVATE KEY-----",
].join("\n");

/** A stand-in for ssh: records its argv, prints it, and behaves according to the remote command. */
function fakeSshScript(log: string): string {
  return `#!${process.execPath}
const fs = require("fs");
const net = require("net");
const argv = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify(argv) + "\\n");
const cmd = argv[argv.length - 1];
process.stdout.write("ARGV " + JSON.stringify(argv) + "\\n");
if (process.env.OPENAI_API_KEY) process.stdout.write("LEAKED_ENV\\n");
if (cmd === "fail") { process.stderr.write("boom\\n"); process.exit(3); }
if (cmd === "noconnect") { process.stderr.write("ssh: connect to host: Connection refused\\n"); process.exit(255); }
if (cmd === "big") { process.stdout.write("x".repeat(300000) + "\\nEND-OF-OUTPUT\\n", () => process.exit(0)); }
if (cmd.startsWith("hang ")) {
  const s = net.connect(Number(cmd.slice(5)), "127.0.0.1", () => s.write(String(process.pid)));
  setInterval(() => {}, 1000);
} else if (cmd !== "big") {
  process.exit(0);
}
`;
}

function argvOf(result: ToolResult): string[] {
  const line = result.content.split("\n").find((l) => l.startsWith("ARGV "));
  if (!line) expect.fail(`no ARGV line in: ${result.content}`);
  return JSON.parse(line.slice(5)) as string[];
}

function toolCtx(
  cwd: string,
  opts: { confirm?: (r: ConfirmationRequest) => Promise<boolean>; signal?: AbortSignal } = {},
): ToolContext {
  return {
    sessionId: "s-ssh",
    cwd,
    toolCallId: "call-1",
    mode: "build",
    plansDir: join(cwd, ".agentd", "plans", "s-ssh"),
    permissionMode: "default",
    signal: opts.signal ?? new AbortController().signal,
    emit: () => {},
    confirm: opts.confirm ?? (async () => true),
    ask: async () => [],
  };
}

/** A confirm callback that records every request and answers `allow`. */
function recorder(allow: boolean) {
  const asked: ConfirmationRequest[] = [];
  const confirm = async (r: ConfirmationRequest) => {
    asked.push(r);
    return allow;
  };
  return { asked, confirm };
}

/** A trust service for daemons whose built-ins do not provide one. */
function testTrustPlugin(): Plugin {
  const trusted = new Set<string>();
  const trust: ProjectTrust = {
    projectRoot: (cwd) => cwd,
    isTrusted: (cwd) => trusted.has(cwd),
    list: () => [],
    pins: () => undefined,
    set: async (cwd, value) => {
      if (value) trusted.add(cwd);
      else trusted.delete(cwd);
      return { path: cwd, trusted: value, decidedAt: new Date().toISOString() };
    },
    onChange: () => toDisposable(() => {}),
  };
  return definePlugin({
    manifest: { id: "test-trust", version: "1.0.0", description: "trust for tests", provides: [ProjectTrustToken.id] },
    register: (ctx) => void ctx.services.provide(ProjectTrustToken, trust),
  });
}

function builtins() {
  const base = builtinPlugins.filter((p) => p.manifest.id !== sshPlugin.manifest.id);
  const hasTrust = base.some((p) => p.manifest.provides?.includes(ProjectTrustToken.id));
  return [...base, ...(hasTrust ? [] : [testTrustPlugin()]), sshPlugin].map(builtinSource);
}

describe("ssh plugin", () => {
  let d: TestDaemon;
  let work: string;
  let log: string;
  let binary: string;
  let project: string;
  let fake: FakeProvider;
  const start = (extra: Record<string, unknown> = {}, env: Record<string, string> = {}) =>
    startTestDaemon({
      builtins: builtins(),
      config: { pluginOptions: { ssh: { binary, maxOutputBytes: 4096, ...extra } } },
      // debug: every log line is written, so the tests can check that no key material reaches the log.
      env: {
        OPENAI_API_KEY: "sk-must-not-reach-ssh",
        AGENTD_LOG_LEVEL: "debug",
        OPENAI_BASE_URL: fake.url,
        AGENTD_MODEL: "fake-model",
        ...env,
      },
    });
  const tool = (): ToolDefinition => d.daemon.services.get(ToolRegistryToken).get("ssh") ?? expect.fail("no ssh tool");
  const run = (args: Record<string, unknown>, ctx = toolCtx(project)) => tool().execute(args, ctx);
  const calls = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").filter(Boolean) : []);

  beforeEach(async () => {
    work = realpathSync(mkdtempSync(join(tmpdir(), "agentd-ssh-")));
    log = join(work, "calls.log");
    binary = join(work, "fake-ssh");
    writeFileSync(binary, fakeSshScript(log));
    chmodSync(binary, 0o755);
    project = join(work, "project");
    mkdirSync(project);
    fake = await startFakeProvider();
    d = await start();
  });
  afterEach(async () => {
    await d.cleanup();
    await fake.close();
    rmSync(work, { recursive: true, force: true });
  });

  describe("POST /ssh/key", () => {
    it("stores the key with mode 0600 under a sanitised name, and never echoes or logs it", async () => {
      const res = await d.post("/ssh/key", { name: "../../my key/id", key: OPENSSH_KEY });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ ok: true, name: "_.._my_key_id", format: "openssh" });
      const keysDir = join(realpathSync(d.home), "ssh", "keys");
      expect(res.body.path).to.equal(join(keysDir, "_.._my_key_id"));
      expect(statSync(res.body.path).mode & 0o777).to.equal(0o600);
      expect(statSync(keysDir).mode & 0o777).to.equal(0o700);
      expect(statSync(join(d.home, "ssh")).mode & 0o777).to.equal(0o700);
      expect(readFileSync(res.body.path, "utf8")).to.equal(`${OPENSSH_KEY.replace(/\r\n/g, "\n")}\n`);
      expect(res.text).to.not.include(MARKER);

      const again = await d.post("/ssh/key", { name: "deploy", key: ENCRYPTED_RSA });
      expect(again.body).to.include({ name: "deploy", format: "rsa" });
      await d.stop();
      const logText = readFileSync(join(d.home, "agentd.log"), "utf8");
      expect(logText).to.include("ssh key stored");
      expect(logText).to.not.include(MARKER);
      expect(logText).to.not.include("MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun");
    });

    it("answers 400 for public keys, garbage, bad names and bad bodies, without quoting the key", async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{ name: "k", key: `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${MARKER} me@host` }, /public key/],
        [{ name: "k", key: `-----BEGIN PUBLIC KEY-----\n${MARKER}\n-----END PUBLIC KEY-----` }, /public key/],
        [{ name: "k", key: `not a key ${MARKER}` }, /private key/],
        [
          { name: "k", key: `-----BEGIN OPENSSH PRIVATE KEY-----\n${MARKER}\n-----END RSA PRIVATE KEY-----` },
          /private key/,
        ],
        [{ name: "...", key: OPENSSH_KEY }, /name/],
        [{ name: "", key: OPENSSH_KEY }, /name/],
        [{ key: OPENSSH_KEY }, /name/],
        [{ name: "k" }, /key/],
        [{ name: "k", key: 42 }, /key/],
        [{ name: "k", key: OPENSSH_KEY, mode: "0644" }, /mode/],
      ];
      for (const [body, msg] of cases) {
        const res = await d.post("/ssh/key", body);
        expect(res.status, JSON.stringify(body).slice(0, 80)).to.equal(400);
        expect(res.body.error).to.match(msg);
        expect(res.text).to.not.include(MARKER);
      }
      const raw = await d.request("POST", "/ssh/key", undefined, { raw: "{nope" });
      expect(raw.status).to.equal(400);
      expect(existsSync(join(d.home, "ssh", "keys"))).to.equal(false);
    });
  });

  describe("POST /ssh/add", () => {
    it("adds and replaces hosts in hosts.json (0600)", async () => {
      await d.post("/ssh/key", { name: "deploy", key: OPENSSH_KEY });
      const res = await d.post("/ssh/add", {
        name: "web",
        host: "web.example.com",
        user: "deploy",
        port: 2222,
        key: "deploy",
      });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({
        ok: true,
        host: { name: "web", host: "web.example.com", user: "deploy", port: 2222, key: "deploy" },
      });
      const cast = await d.post("/ssh/add", { name: "db", host: "[::1]", username: "pg" });
      expect(cast.body.host).to.deep.equal({ name: "db", host: "::1", user: "pg", port: 22 });
      const keyPath = join(d.home, "ssh", "keys", "deploy");
      const byPath = await d.post("/ssh/add", { name: "bypath", host: "h1", keyPath });
      expect(byPath.body.host.keyPath).to.equal(realpathSync(keyPath));
      await d.post("/ssh/add", { name: "bypath", host: "h1" });
      await d.post("/ssh/add", { name: "web", host: "10.0.0.2" });
      const file = join(d.home, "ssh", "hosts.json");
      expect(statSync(file).mode & 0o777).to.equal(0o600);
      const stored = JSON.parse(readFileSync(file, "utf8")).hosts;
      expect(stored).to.deep.equal([
        { name: "db", host: "::1", user: "pg", port: 22 },
        { name: "bypath", host: "h1", port: 22 },
        { name: "web", host: "10.0.0.2", port: 22 },
      ]);
    });

    it("refuses unsafe or invalid fields with 400", async () => {
      const ok = { name: "web", host: "web.example.com" };
      const bad: Array<Record<string, unknown>> = [
        { ...ok, port: 0 },
        { ...ok, port: 65536 },
        { ...ok, port: "22" },
        { ...ok, port: 22.5 },
        { ...ok, host: "web example.com" },
        { ...ok, host: "web.example.com;rm -rf ~" },
        { ...ok, host: "-oProxyCommand=touch /tmp/pwned" },
        { ...ok, host: "$(id)" },
        { ...ok, host: "a`id`" },
        { ...ok, host: "" },
        { ...ok, user: "-l" },
        { ...ok, user: "root; id" },
        { ...ok, user: "a b" },
        { ...ok, name: "../x" },
        { ...ok, name: "-x" },
        { ...ok, key: "missing" },
        { ...ok, keyPath: "/etc/passwd" },
        { ...ok, key: "x", keyPath: "/x" },
        { ...ok, user: "a", username: "b" },
        { ...ok, password: "hunter2" },
        { ...ok, extra: true },
        { host: "web.example.com" },
        { name: "web" },
      ];
      for (const body of bad) {
        const res = await d.post("/ssh/add", body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error, JSON.stringify(body)).to.be.a("string").that.is.not.empty;
        expect(res.text).to.not.include("hunter2");
      }
      expect(existsSync(join(d.home, "ssh", "hosts.json"))).to.equal(false);
    });
  });

  describe("the ssh tool", () => {
    beforeEach(async () => {
      await d.post("/ssh/key", { name: "deploy", key: OPENSSH_KEY });
      expect(
        (await d.post("/ssh/add", { name: "web", host: "web.example.com", user: "deploy", port: 2222, key: "deploy" }))
          .status,
      ).to.equal(200);
      expect((await d.post("/ssh/add", { name: "bare", host: "10.1.2.3" })).status).to.equal(200);
    });

    it("runs ssh with an argument array, after confirming, without the daemon's secrets in its environment", async () => {
      const { asked, confirm } = recorder(true);
      const command = "ls -la; echo $HOME && -oProxyCommand=x";
      const result = await run({ host: "web", command }, toolCtx(project, { confirm }));
      expect(result.isError, result.content).to.not.equal(true);
      const key = join(realpathSync(d.home), "ssh", "keys", "deploy");
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
      await run({ host: "web", command: "rm -rf /var/www" }, toolCtx(project, { confirm }));
      expect(asked[0]?.reason)
        .to.match(/recursive, forced delete/)
        .and.include("web");

      const d2 = await startTestDaemon({
        builtins: builtins(),
        config: { pluginOptions: { ssh: { binary, confirm: "dangerous" } } },
      });
      try {
        await d2.post("/ssh/add", { name: "web", host: "web.example.com" });
        const t = d2.daemon.services.get(ToolRegistryToken).get("ssh") ?? expect.fail("no ssh tool");
        asked.length = 0;
        const deny = recorder(false);
        const safe = await t.execute({ host: "web", command: "uptime" }, toolCtx(project, { confirm }));
        expect(safe.isError, safe.content).to.not.equal(true);
        expect(asked).to.deep.equal([]);
        const risky = await t.execute(
          { host: "web", command: "ls; sudo reboot" },
          toolCtx(project, { confirm: deny.confirm }),
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
        config: { disabledPlugins: ["tools-shell"], pluginOptions: { ssh: { binary, confirm: "dangerous" } } },
      });
      try {
        await d2.post("/ssh/add", { name: "web", host: "web.example.com" });
        const t = d2.daemon.services.get(ToolRegistryToken).get("ssh") ?? expect.fail("no ssh tool");
        const { asked, confirm } = recorder(true);
        const res = await t.execute({ host: "web", command: "uptime" }, toolCtx(project, { confirm }));
        expect(res.isError, res.content).to.not.equal(true);
        expect(asked.map((r) => r.command)).to.deep.equal(["uptime"]);
        expect(asked[0]?.reason).to.match(/tools-shell plugin, which classifies commands, is not loaded/);
      } finally {
        await d2.cleanup();
      }
    });

    it("never runs the command when the user denies it", async () => {
      const result = await run({ host: "web", command: "rm -rf /" }, toolCtx(project, { confirm: async () => false }));
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
        config: { pluginOptions: { ssh: { binary: join(work, "no-such-ssh") } } },
      });
      try {
        await d2.post("/ssh/add", { name: "web", host: "web.example.com" });
        const t = d2.daemon.services.get(ToolRegistryToken).get("ssh") ?? expect.fail("no ssh tool");
        const missing = await t.execute({ host: "web", command: "id" }, toolCtx(project));
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
        const pending = run({ host: "web", command: `hang ${port}`, timeout }, toolCtx(project, { signal: ac.signal }));
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
      mkdirSync(join(project, ".agentd"));
      writeFileSync(
        join(project, ".agentd", "ssh.json"),
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

      await d.daemon.services.get(ProjectTrustToken).set(project, true);
      const trusted = await run({ host: "proj", command: "id" });
      expect(trusted.isError, trusted.content).to.not.equal(true);
      expect(argvOf(trusted)).to.include.members(["-p", "2200", "ci@10.9.8.7"]);
      const evil = await run({ host: "evil", command: "id" });
      expect(evil.error?.code).to.equal("not_found");
      expect(calls()).to.have.length(1);
    });
  });

  describe("the ssh tool in a turn", () => {
    it("emits bash_confirm; allowed runs once, denied never runs", async () => {
      {
        await d.post("/ssh/add", { name: "web", host: "web.example.com", user: "deploy" });
        const id = await d.createSession({ cwd: project });
        const sse = await d.sse(`/sessions/${id}/events`);
        await sse.waitForType("status");

        fake.script(tools([{ name: "ssh", args: { host: "web", command: "uptime" } }]), text("done"));
        expect((await d.post(`/sessions/${id}/chat`, { text: "check uptime" })).status).to.equal(202);
        const ask = await sse.waitForType("bash_confirm");
        expect(ask.json).to.include({ tool: "ssh", command: "uptime" });
        expect((await d.post(`/sessions/${id}/bash-confirm`, { id: ask.json.id, allow: true })).status).to.equal(202);
        const ran = await sse.waitForType("tool_end");
        expect(ran.json.status).to.equal("ok");
        expect(ran.json.result.content).to.include('"deploy@web.example.com","--","uptime"');
        const firstEnd = await sse.waitForType("end");

        const from = sse.frames.indexOf(firstEnd) + 1;
        fake.script(tools([{ name: "ssh", args: { host: "web", command: "reboot" } }]), text("ok"));
        await d.post(`/sessions/${id}/chat`, { text: "reboot it" });
        const ask2 = await sse.waitForType("bash_confirm", 10_000, from);
        expect(ask2.json.command).to.equal("reboot");
        await d.post(`/sessions/${id}/bash-confirm`, { id: ask2.json.id, allow: false });
        const denied = await sse.waitForType("tool_end", 10_000, from);
        expect(denied.json.status).to.equal("error");
        expect(denied.json.result.error.code).to.equal("permission_denied");
        await sse.waitForType("end", 10_000, from);
        expect(calls().map((c) => JSON.parse(c).at(-1))).to.deep.equal(["uptime"]);
        sse.close();
      }
    });
  });
});

describe("ssh validation helpers", () => {
  it("sanitises key names to plain file names", () => {
    expect(sanitiseKeyName("id_ed25519")).to.equal("id_ed25519");
    expect(sanitiseKeyName(" my key ")).to.equal("my_key");
    expect(sanitiseKeyName("../../etc/passwd")).to.equal("_.._etc_passwd");
    expect(sanitiseKeyName(".hidden")).to.equal("hidden");
    expect(sanitiseKeyName("-rf")).to.equal("rf");
    expect(sanitiseKeyName("ключ-1")).to.equal("____-1");
    expect(() => sanitiseKeyName("..")).to.throw(/name/);
  });

  it("normalises private keys and tells public keys apart", () => {
    expect(normalisePrivateKey(OPENSSH_KEY).key.endsWith("-----END OPENSSH PRIVATE KEY-----\n")).to.equal(true);
    expect(normalisePrivateKey(ENCRYPTED_RSA).format).to.equal("rsa");
    expect(() => normalisePrivateKey("ssh-rsa AAAAB3NzaC1yc2E me@x")).to.throw(/public key/);
  });
});
