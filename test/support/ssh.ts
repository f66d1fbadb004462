import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
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
} from "../../core/index.js";
import { builtinSource } from "../../host/plugin-sources.js";
import { builtinPlugins } from "../../plugins/index.js";
import sshPlugin from "../../plugins/ssh/index.js";
import { startTestDaemon, type TestDaemon } from "../../testing/daemon.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider.js";

export const MARKER = "S2V5Qm9keVNlY3JldE1hcmtlcjEyMzQ1Njc4OQ";
export const OPENSSH_KEY = [
  "-----BEGIN OPENSSH PRIVATE KEY-----",
  "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
  `${MARKER}QyNTUxOQAAACBdGVzdGtleWJvZHk=`,
  "-----END OPENSSH PRIVATE KEY-----",
].join("\r\n");
export const ENCRYPTED_RSA = [
  "-----BEGIN RSA PRIVATE KEY-----",
  "Proc-Type: 4,ENCRYPTED",
  "DEK-Info: AES-128-CBC,2A9B7C5D6E3F1A0B2C4D6E8F0A1B3C5D",
  "",
  "MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
  "-----END RSA PRIVATE KEY-----",
].join("\n");

/** A stand-in for ssh: records its argv, prints it, and behaves according to the remote command. */
export function fakeSshScript(log: string): string {
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

export function argvOf(result: ToolResult): string[] {
  const line = result.content.split("\n").find((l) => l.startsWith("ARGV "));
  if (!line) expect.fail(`no ARGV line in: ${result.content}`);
  return JSON.parse(line.slice(5)) as string[];
}

export function toolCtx(
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
export function recorder(allow: boolean) {
  const asked: ConfirmationRequest[] = [];
  const confirm = async (r: ConfirmationRequest) => {
    asked.push(r);
    return allow;
  };
  return { asked, confirm };
}

/** A trust service for daemons whose built-ins do not provide one. */
export function testTrustPlugin(): Plugin {
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

export function builtins() {
  const base = builtinPlugins.filter((p) => p.manifest.id !== sshPlugin.manifest.id);
  const hasTrust = base.some((p) => p.manifest.provides?.includes(ProjectTrustToken.id));
  return [...base, ...(hasTrust ? [] : [testTrustPlugin()]), sshPlugin].map(builtinSource);
}

/** A daemon whose ssh plugin runs a fake ssh binary that logs its argv, fresh for each test. */
export function sshFixture() {
  const fx = {} as { d: TestDaemon; work: string; log: string; binary: string; project: string; fake: FakeProvider };
  const start = (extra: Record<string, unknown> = {}, env: Record<string, string> = {}) =>
    startTestDaemon({
      builtins: builtins(),
      config: { pluginOptions: { ssh: { binary: fx.binary, maxOutputBytes: 4096, ...extra } } },
      // debug: every log line is written, so the tests can check that no key material reaches the log.
      env: {
        OPENAI_API_KEY: "sk-must-not-reach-ssh",
        AGENTD_LOG_LEVEL: "debug",
        OPENAI_BASE_URL: fx.fake.url,
        AGENTD_MODEL: "fake-model",
        ...env,
      },
    });
  const tool = (): ToolDefinition =>
    fx.d.daemon.services.get(ToolRegistryToken).get("ssh") ?? expect.fail("no ssh tool");
  const run = (args: Record<string, unknown>, ctx = toolCtx(fx.project)) => tool().execute(args, ctx);
  const calls = () => (existsSync(fx.log) ? readFileSync(fx.log, "utf8").trim().split("\n").filter(Boolean) : []);

  beforeEach(async () => {
    fx.work = realpathSync(mkdtempSync(join(tmpdir(), "agentd-ssh-")));
    fx.log = join(fx.work, "calls.log");
    fx.binary = join(fx.work, "fake-ssh");
    writeFileSync(fx.binary, fakeSshScript(fx.log));
    chmodSync(fx.binary, 0o755);
    fx.project = join(fx.work, "project");
    mkdirSync(fx.project);
    fx.fake = await startFakeProvider();
    fx.d = await start();
  });
  afterEach(async () => {
    await fx.d.cleanup();
    await fx.fake.close();
    rmSync(fx.work, { recursive: true, force: true });
  });
  return { fx, start, tool, run, calls };
}
