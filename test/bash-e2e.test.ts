import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools } from "../testing/fake-provider.js";
import type { SseClient } from "../testing/sse.js";

/** The real `bash` tool through the real daemon: the dangerous-command gate over HTTP + SSE, abort, modes. */
describe("bash through the daemon", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let sse: SseClient;
  let id: string;
  let cwd: string;

  beforeEach(async () => {
    fake = await startFakeProvider();
    cwd = realpathSync(mkdtempSync(join(tmpdir(), "agentd-bash-")));
    d = await startTestDaemon({
      config: { provider: { baseURL: fake.url, apiKey: "sk-bash-secret", model: "m" } },
      env: { OPENAI_API_KEY: "sk-env-secret-123" },
    });
    id = await d.createSession({ cwd });
    sse = await d.sse(`/sessions/${id}/events`);
  });
  afterEach(async () => {
    sse.close();
    await d.cleanup();
    await fake.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  const bash = (command: string, callId = "b1") => tools([{ name: "bash", args: { command }, id: callId }]);
  const run = async (prompt: string) => d.post(`/sessions/${id}/chat`, { text: prompt });
  const ended = () => sse.waitFor((f) => f.json?.type === "end", 20_000);

  it("runs a harmless command at once, in the session's directory, without the daemon's secrets", async () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
    fake.script(bash("pwd; echo ${OPENAI_API_KEY:-no-key}; exit 3"), text("ok"));
    await run("where am I?");
    await ended();
    expect(sse.ofType("bash_confirm")).to.have.length(0);
    const out = sse.ofType("tool_end")[0]?.json.result.content as string;
    expect(out).to.include(cwd).and.include("no-key").and.include("Exit code: 3");
    expect(JSON.stringify(sse.frames)).to.not.include("sk-env-secret");
  });

  it("streams a long command's output while it runs (tool_output), before its result", async () => {
    fake.script(bash("for i in 1 2 3; do echo step$i; sleep 0.3; done"), text("built"));
    await run("build");
    const first = await sse.waitFor((f) => f.json?.type === "tool_output" && f.json.text.includes("step1"));
    expect(first.json.toolCallId).to.equal("b1");
    await ended();
    const outputs = sse.ofType("tool_output");
    expect(outputs.map((f) => f.json.text).join("")).to.equal("step1\nstep2\nstep3\n");
    expect(sse.frames.indexOf(first)).to.be.lessThan(sse.frames.indexOf(sse.ofType("tool_end")[0] as never));
  });

  it("asks before a dangerous command; denied never runs, allowed runs once", async () => {
    const marker = join(cwd, "gone");
    fake.script(bash(`rm -rf ./build && touch ${marker}`), text("understood"));
    await run("clean");
    const ask = (await sse.waitForType("bash_confirm")).json;
    expect(ask.command).to.include("rm -rf ./build");
    expect(ask.reason).to.match(/rm|recursive|delete/i);
    await d.post(`/sessions/${id}/bash-confirm`, { id: ask.id, allow: false });
    await ended();
    expect(existsSync(marker)).to.equal(false);
    expect(sse.ofType("tool_end")[0]?.json.result.error.code).to.equal("permission_denied");

    const from = sse.frames.length;
    fake.script(bash(`rm -rf ./build && touch ${marker}`, "b2"), text("done"));
    await run("clean, really");
    const ask2 = (await sse.waitFor((f) => f.json?.type === "bash_confirm", 10_000, from)).json;
    expect((await d.post(`/sessions/${id}/bash-confirm`, { id: ask2.id, allow: true })).status).to.equal(202);
    await sse.waitFor((f) => f.json?.type === "end", 20_000, from);
    expect(existsSync(marker)).to.equal(true);
  });

  it("asks nothing in bypass mode (/permissions bypass)", async () => {
    const res = await d.post(`/sessions/${id}/command`, { command: "/permissions bypass" });
    expect(res.status).to.equal(200);
    const marker = join(cwd, "bypassed");
    fake.script(bash(`rm -rf ./nothing && touch ${marker}`), text("ok"));
    await run("go");
    await ended();
    expect(sse.ofType("bash_confirm")).to.have.length(0);
    expect(existsSync(marker)).to.equal(true);
  });

  it("kills the command's process tree when the turn is aborted", async () => {
    // The sandbox has its own PID namespace, so the child is found by a unique argument, seen from the host.
    const tag = `${30 + Math.floor(Math.random() * 1000) / 1000}`;
    fake.script(bash(`sleep ${tag} & wait`));
    await run("wait");
    await sse.waitForType("tool_start");
    for (let i = 0; i < 500 && !sleeping(tag).length; i++) await new Promise((r) => setTimeout(r, 10)); // another process starts it
    expect(sleeping(tag), "the sleep started").to.have.length(1);
    await d.post(`/sessions/${id}/abort`);
    await ended();
    expect(sse.ofType("end")[0]?.json.reason).to.equal("aborted");
    expect(sleeping(tag), `sleep ${tag} still running`).to.deep.equal([]);
  });

  it("plan mode allows read-only commands and plan files, and refuses other writes with a clear reason", async () => {
    await d.post(`/sessions/${id}/mode`, { mode: "plan" });
    fake.script(
      tools([
        { name: "bash", args: { command: "ls -la | wc -l" }, id: "p1" },
        { name: "bash", args: { command: "echo hi > out.txt" }, id: "p2" },
        { name: "write", args: { path: "src/main.ts", content: "x" }, id: "p3" },
        { name: "write", args: { path: `.agentd/plans/${id}/plan.md`, content: "# Plan\n- [ ] step" }, id: "p4" },
      ]),
      text("planned"),
    );
    await run("look around");
    await ended();
    const ends = Object.fromEntries(sse.ofType("tool_end").map((f) => [f.json.id, f.json]));
    expect(ends.p1.status).to.equal("ok");
    expect(ends.p2.result.error.code).to.equal("permission_denied");
    expect(ends.p2.result.content).to.match(/redirect/i);
    expect(existsSync(join(cwd, "out.txt"))).to.equal(false);
    expect(ends.p3.result.error.code).to.equal("permission_denied");
    expect(ends.p3.result.content).to.match(/plan/i);
    expect(existsSync(join(cwd, "src", "main.ts"))).to.equal(false);
    expect(ends.p4.status).to.equal("ok");
    expect(readFileSync(join(cwd, ".agentd", "plans", id, "plan.md"), "utf8")).to.include("- [ ] step");
  });
});

/** Live (not zombie) processes running `sleep <tag>`, from the host's /proc. */
function sleeping(tag: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      const state = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.[0];
      if (cmd[0]?.endsWith("sleep") && cmd[1] === tag && state !== "Z") out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
