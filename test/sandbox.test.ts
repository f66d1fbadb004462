import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { ApiClient, DaemonProcess } from "../testing/daemon.js";
import { spawnDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools } from "../testing/fake-provider.js";
import type { SseClient } from "../testing/sse.js";

/**
 * The sandbox, black-box: a real `agentd serve` with a home directory of its own (HOME points at a temporary
 * "user home" holding the daemon home, ~/.ssh, ~/.aws and ~/.netrc), the model scripted to try each escape a prompt
 * injection would ask for. Each would succeed without the sandbox. Needs bubblewrap (`.ci/run` installs it).
 */

interface World {
  user: string;
  home: string;
  project: string;
  fake: FakeProvider;
  daemon: DaemonProcess;
  api: ApiClient;
}

async function world(
  opts: { config?: Record<string, unknown>; env?: Record<string, string>; userIn?: string } = {},
): Promise<World> {
  const user = realpathSync(mkdtempSync(join(opts.userIn ?? tmpdir(), "agentd-sbx-user-")));
  const home = join(user, ".agentd");
  const project = join(user, "work", "project");
  mkdirSync(project, { recursive: true });
  mkdirSync(home, { recursive: true });
  mkdirSync(join(user, ".ssh"));
  writeFileSync(join(user, ".ssh", "id_ed25519"), "PRIVATE-KEY-MATERIAL\n");
  mkdirSync(join(user, ".aws"));
  writeFileSync(join(user, ".aws", "credentials"), "aws_secret_access_key=AWS-SECRET\n");
  writeFileSync(join(user, ".netrc"), "machine example.com password NETRC-SECRET\n");
  const fake = await startFakeProvider();
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({ provider: { baseURL: fake.url, apiKey: "sk-config-secret", model: "m" }, ...opts.config }),
  );
  const daemon = await spawnDaemon(home, {
    HOME: user,
    OPENAI_API_KEY: "sk-env-secret-42",
    MY_SERVICE_TOKEN: "svc-token-secret",
    ...opts.env,
  });
  return { user, home, project, fake, daemon, api: daemon.client };
}

async function dispose(w: World): Promise<void> {
  w.daemon.child.kill("SIGTERM");
  await w.daemon.exited;
  await w.fake.close();
  rmSync(w.user, { recursive: true, force: true });
}

/** Runs one bash call through a turn; answers its confirmation with `answer` when one comes. */
async function runBash(
  w: World,
  command: string,
  opts: { cwd?: string; answer?: boolean; args?: Record<string, unknown> } = {},
): Promise<{ output: string; asked: Array<Record<string, unknown>>; sse: SseClient; id: string }> {
  const id = await w.api.createSession({ cwd: opts.cwd ?? w.project });
  const sse = await w.api.sse(`/sessions/${id}/events`);
  w.fake.script(tools([{ name: "bash", args: { command, ...opts.args }, id: "b1" }]), text("done"));
  expect((await w.api.post(`/sessions/${id}/chat`, { text: "go" })).status).to.equal(202);
  const asked: Array<Record<string, unknown>> = [];
  const first = await sse.waitFor((f) => f.json?.type === "bash_confirm" || f.json?.type === "tool_end", 30_000);
  if (first.json.type === "bash_confirm") {
    asked.push(first.json);
    if (opts.answer === undefined) throw new Error(`unexpected confirmation: ${first.json.reason}`);
    await w.api.post(`/sessions/${id}/bash-confirm`, { id: first.json.id, allow: opts.answer });
  }
  const end = await sse.waitFor((f) => f.json?.type === "tool_end", 30_000);
  await sse.waitFor((f) => f.json?.type === "end", 30_000);
  sse.close();
  return { output: String(end.json.result.content), asked, sse, id };
}

describe("sandbox: the agent's commands are confined (bubblewrap)", function () {
  this.timeout(60_000);
  let w: World;
  before(async () => {
    w = await world({ config: { sandbox: { env: ["ALLOWED_TOKEN"] } }, env: { ALLOWED_TOKEN: "let-me-through" } });
  });
  after(async () => dispose(w));

  it("reports the sandbox in /server/status after its self-check", async () => {
    // A command waits for the self-check; once it ran, the status reports its outcome.
    expect((await runBash(w, "echo checked")).output).to.include("checked");
    const status = (await w.api.get("/server/status")).body.sandbox;
    expect(status).to.include({ enabled: true, kind: "bubblewrap", network: "ask" });
    expect(status.writable).to.include(join(w.user, ".npm")).and.include(join(w.user, ".cache"));
  });

  it("cannot read the daemon's token: server.json and the token file read as absent (bash and the read tool)", async () => {
    const token = w.daemon.info.token;
    const r = await runBash(w, `cat ${w.home}/server.json; cat ${w.home}/token; ls -A ${w.home} | wc -l`);
    expect(r.output).to.not.include(token);
    expect(r.output).to.match(/No such file or directory/);
    // The read tool, from a session whose directory contains the daemon home (the user's home directory).
    const id = await w.api.createSession({ cwd: w.user });
    const sse = await w.api.sse(`/sessions/${id}/events`);
    w.fake.script(
      tools([
        { name: "read", args: { path: ".agentd/server.json" }, id: "r1" },
        { name: "ls", args: { path: "." }, id: "r2" },
        { name: "grep", args: { pattern: token.slice(0, 16) }, id: "r3" },
        { name: "glob", args: { pattern: "**/server.json" }, id: "r4" },
      ]),
      text("done"),
    );
    await w.api.post(`/sessions/${id}/chat`, { text: "read it" });
    await sse.waitFor((f) => f.json?.type === "end", 30_000);
    const [read, ls, grep, glob] = ["r1", "r2", "r3", "r4"].map(
      (id) => sse.ofType("tool_end").find((f) => f.json.id === id)?.json.result,
    );
    sse.close();
    expect(read.error.code).to.equal("not_found");
    expect(JSON.stringify(read)).to.not.include(token);
    expect(ls.content).to.include("work/").and.not.include(".agentd").and.not.include(".ssh");
    expect(JSON.stringify([grep, glob]))
      .to.not.include(token)
      .and.not.include(".agentd/server.json");
  });

  it("cannot read ~/.ssh, ~/.aws/credentials or ~/.netrc", async () => {
    const r = await runBash(w, "cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc; ls -A ~/.ssh ~/.aws | wc -l");
    expect(r.output).to.not.include("PRIVATE-KEY").and.not.include("AWS-SECRET").and.not.include("NETRC-SECRET");
  });

  it("gets a scrubbed environment: no provider key, no AGENTD_*, nothing named like a secret, but the allowlist", async () => {
    const r = await runBash(w, "env");
    expect(r.output).to.not.include("sk-env-secret").and.not.include("svc-token-secret");
    expect(r.output).to.not.match(/^AGENTD_/m);
    expect(r.output).to.include("ALLOWED_TOKEN=let-me-through");
    expect(r.output).to.include(`HOME=${w.user}`);
  });

  it("cannot create files outside the working directory: the home, the project's parent, the daemon home", async () => {
    const targets = [join(w.user, "planted"), join(w.user, "work", "planted"), join(w.home, "planted")];
    const r = await runBash(w, targets.map((t) => `touch ${t} 2>&1;`).join(" "));
    expect(r.output).to.match(/Read-only file system|No such file/);
    for (const t of targets) expect(existsSync(t), t).to.equal(false);
  });

  it("reaches no server without asking (its own network namespace): not the daemon, not a local one", async () => {
    const server = await listen();
    try {
      const port = (server.address() as { port: number }).port;
      const daemonPort = new URL(w.daemon.info.url).port;
      const r = await runBash(
        w,
        `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>&1 || echo blocked-1; (exec 3<>/dev/tcp/127.0.0.1/${daemonPort}) 2>&1 || echo blocked-2`,
      );
      expect(r.output).to.include("blocked-1").and.include("blocked-2");
      expect(connections.get(server)).to.equal(0);
    } finally {
      server.close();
    }
  });

  it("asks with the reason network for a command that needs it; denied it is not run, allowed it reaches the server", async () => {
    const server = await listen();
    try {
      const port = (server.address() as { port: number }).port;
      const cmd = `curl -s -m 5 http://127.0.0.1:${port}/ -o /dev/null; echo rc=$?`;
      const denied = await runBash(w, cmd, { answer: false });
      expect(denied.asked[0]?.reasons).to.deep.equal(["network"]);
      expect(denied.asked[0]?.suggestedRule).to.equal("curl *");
      expect(connections.get(server)).to.equal(0);
      const allowed = await runBash(w, cmd, { answer: true });
      expect(allowed.asked).to.have.length(1);
      expect(connections.get(server)).to.be.greaterThan(0);
    } finally {
      server.close();
    }
  });

  it("cannot see or signal the daemon (its own PID namespace)", async () => {
    const pid = w.daemon.child.pid as number;
    const r = await runBash(w, `kill -9 ${pid} 2>&1; echo rc=$?; ps -e -o pid= | wc -l`);
    expect(r.output).to.include("rc=1");
    expect((await w.api.get("/server/status")).status).to.equal(200);
    expect(w.daemon.child.exitCode).to.equal(null);
  });

  it("keeps ordinary work working: files, git, node, npm scripts, a temp file", async () => {
    writeFileSync(
      join(w.project, "package.json"),
      JSON.stringify({ name: "p", version: "1.0.0", scripts: { hello: "node -e \"console.log('from-npm')\"" } }),
    );
    const script = [
      "set -e",
      "echo one > a.txt && sed -i s/one/two/ a.txt && cat a.txt",
      "git init -q && git -c user.email=a@b -c user.name=A add a.txt package.json",
      "git -c user.email=a@b -c user.name=A commit -qm first && git log --oneline | wc -l",
      "node -e 'console.log(1 + 1)'",
      "npm run -s hello",
      't=$(mktemp) && echo tmp-ok > "$t" && cat "$t"',
    ].join("\n");
    const r = await runBash(w, script);
    expect(r.output).to.include("two").and.include("from-npm").and.include("tmp-ok");
    expect(r.output).to.match(/^2$/m);
    expect(r.output).to.include("Exit code: 0");
    expect(readFileSync(join(w.project, "a.txt"), "utf8")).to.equal("two\n");
    expect(execFileSync("git", ["log", "--oneline"], { cwd: w.project, encoding: "utf8" })).to.include("first");
  });

  it("keeps the daemon home private: files 0600, directories 0700", async () => {
    for (const f of ["agentd.db", "agentd.db-wal", "server.json", "config.json"]) {
      const p = join(w.home, f);
      if (existsSync(p)) expect(statSync(p).mode & 0o777, f).to.equal(0o600);
    }
    expect(statSync(join(w.home, "agentd.db")).mode & 0o777).to.equal(0o600);
    expect(statSync(w.home).mode & 0o777).to.equal(0o700);
  });
});

describe("sandbox: fails closed", function () {
  this.timeout(60_000);

  it("without bwrap every command is asked about as 'not sandboxed', in bypass mode too", async () => {
    const w = await world({ env: { AGENTD_BWRAP: "/nonexistent/bwrap" } });
    try {
      const status = (await w.api.get("/server/status")).body.sandbox;
      expect(status).to.include({ enabled: false, kind: "none" });
      expect(status.reason).to.include("/nonexistent/bwrap");
      const r = await runBash(w, "echo harmless", { answer: false });
      expect(r.asked[0]?.reasons).to.deep.equal(["not sandboxed"]);
      expect(r.output).to.include("declined");
      const id = await w.api.createSession({ cwd: w.project });
      await w.api.post(`/sessions/${id}/command`, { command: "/permissions bypass" });
      const sse = await w.api.sse(`/sessions/${id}/events`);
      w.fake.script(tools([{ name: "bash", args: { command: "echo again" }, id: "b2" }]), text("ok"));
      await w.api.post(`/sessions/${id}/chat`, { text: "go" });
      const ask = await sse.waitFor((f) => f.json?.type === "bash_confirm", 30_000);
      expect(ask.json.reasons).to.deep.equal(["not sandboxed"]);
      await w.api.post(`/sessions/${id}/bash-confirm`, { id: ask.json.id, allow: true });
      const end = await sse.waitFor((f) => f.json?.type === "tool_end", 30_000);
      expect(end.json.result.content).to.include("again");
      sse.close();
    } finally {
      await dispose(w);
    }
  });

  it("runs its self-check after the start, not during it; /server/status waits for its outcome", async () => {
    // bwrap behind a wrapper that waits for the test's word: a probe spawned during the start is still this
    // daemon's child when it is ready, and a status that does not wait answers "checking" meanwhile.
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "agentd-sbx-wrap-")));
    const release = join(dir, "release");
    const wrapper = join(dir, "bwrap");
    const bwrap = execFileSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).trim();
    writeFileSync(wrapper, `#!/bin/sh\nwhile [ ! -e '${release}' ]; do sleep 0.01; done\nexec '${bwrap}' "$@"\n`, {
      mode: 0o755,
    });
    const w = await world({ env: { AGENTD_BWRAP: wrapper } });
    try {
      const pid = w.daemon.child.pid as number;
      const probes = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
        .split(" ")
        .filter((p) => p !== "" && readFileSync(`/proc/${p}/cmdline`, "utf8").includes(wrapper));
      expect(probes, "a self-check spawned before the daemon was ready").to.deep.equal([]);
      const status = w.api.get("/server/status");
      setTimeout(() => writeFileSync(release, ""), 200);
      expect((await status).body.sandbox).to.include({ enabled: true, kind: "bubblewrap" });
    } finally {
      await dispose(w);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs its self-check and the agent's commands without the user's ~/.bashrc", async () => {
    // Outside /tmp (private inside the sandbox), so the shell inside would find this home's .bashrc. Read, it ends
    // the shell before the check's last word, and the sandbox would be reported as unable to start.
    const w = await world({ userIn: "/var/tmp" });
    try {
      writeFileSync(join(w.user, ".bashrc"), "exit 7\n");
      const r = await runBash(w, "echo ran");
      expect(r.asked).to.have.length(0);
      expect(r.output).to.include("ran");
      expect((await w.api.get("/server/status")).body.sandbox).to.include({ enabled: true, kind: "bubblewrap" });
    } finally {
      await dispose(w);
    }
  });

  it('runs commands unconfined without asking only with sandbox: "off"', async () => {
    const w = await world({ config: { sandbox: "off" } });
    try {
      expect((await w.api.get("/server/status")).body.sandbox).to.include({ enabled: false, kind: "off" });
      const outside = join(w.user, "written-unconfined");
      const r = await runBash(w, `touch ${outside} && echo ok`);
      expect(r.asked).to.have.length(0);
      expect(existsSync(outside)).to.equal(true);
    } finally {
      await dispose(w);
    }
  });
});

const connections = new WeakMap<Server, number>();

function listen(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((socket) => {
      connections.set(server, (connections.get(server) ?? 0) + 1);
      socket.end("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
    });
    connections.set(server, 0);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}
