import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { agentd } from "./support/cli.js";
import { startTestDaemon, type TestDaemon } from "./support/daemon.js";
import { type FakeProvider, fail, startFakeProvider, text, tools, turn } from "./support/fake-provider.js";
import { askDatabase } from "./support/questions.js";

/** `agentd run`, `agentd sessions` and `agentd attach` as a script uses them, against the real daemon. */
describe("terminal client: agentd run / sessions / attach", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let cwd: string;

  beforeEach(async () => {
    fake = await startFakeProvider();
    cwd = realpathSync(mkdtempSync(join(tmpdir(), "agentd-run-")));
    d = await startTestDaemon({ config: { provider: { baseURL: fake.url, apiKey: "k", model: "m" } } });
  });
  afterEach(async () => {
    await d.cleanup();
    await fake.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  const run = (args: string[], stdin?: string) => agentd(d.home, ["run", "--cwd", cwd, ...args], { stdin });
  const lastUserText = () => {
    const msgs = fake.requests.at(-1)?.messages ?? [];
    const user = msgs.filter((m) => m.role === "user").at(-1);
    return typeof user?.content === "string" ? user.content : JSON.stringify(user?.content);
  };

  it("streams the answer to stdout and tool lines to stderr, exit 0 on end{stop}", async () => {
    fake.script(tools([{ name: "ls", args: { path: "." } }]), text("Hello ", "**world**"));
    const r = run(["say", "hello"]);
    expect(await r.exited).to.equal(0);
    expect(r.stdout()).to.equal("Hello **world**\n");
    expect(r.stderr()).to.include("[ls] .");
    expect(lastUserText()).to.equal("say hello");
  });

  it("--json prints the event stream, one JSON object per line, ending with end{stop}", async () => {
    fake.script(text("a", "b"));
    const r = run(["--json", "hi"]);
    expect(await r.exited).to.equal(0);
    const events = r
      .stdout()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; text?: string; reason?: string });
    expect(events[0]?.type).to.equal("status");
    // (Chunks that reach the daemon in one read travel as one token event.)
    expect(
      events
        .filter((e) => e.type === "token")
        .map((e) => e.text)
        .join(""),
    ).to.equal("ab");
    expect(events.at(-1)).to.include({ type: "end", reason: "stop" });
  });

  it("reads the prompt from stdin", async () => {
    fake.script(text("ok"));
    const r = run([], "explain this\nfile\n");
    expect(await r.exited).to.equal(0);
    expect(lastUserText()).to.equal("explain this\nfile");
  });

  it("agentd chat (and plain agentd) without a terminal behave like agentd run", async () => {
    fake.script(text("piped answer"), text("stdin answer"));
    const chat = agentd(d.home, ["chat", "--cwd", cwd, "hello"]);
    expect(await chat.exited).to.equal(0);
    expect(chat.stdout()).to.equal("piped answer\n");
    const bare = agentd(d.home, [], { stdin: "from a pipe", cwd });
    expect(await bare.exited).to.equal(0);
    expect(bare.stdout()).to.equal("stdin answer\n");
    expect(lastUserText()).to.equal("from a pipe");
  });

  it("says so when the project awaits a trust decision (the turn runs without its local resources)", async () => {
    writeFileSync(join(cwd, "AGENTS.md"), "Be brief.");
    fake.script(text("ok"));
    const r = run(["hi"]);
    expect(await r.exited).to.equal(0);
    expect(r.stderr()).to.include("has project-local resources").and.include("agentd chat");
  });

  it("exits 2 with a usage message when there is no prompt", async () => {
    const r = run([], "");
    expect(await r.exited).to.equal(2);
    expect(r.stderr()).to.include("no prompt");
  });

  it("denies a dangerous command without --yes (exit 4) and allows it with --yes (exit 0)", async () => {
    const marker = join(cwd, "marker");
    fake.script(tools([{ name: "bash", args: { command: `rm -rf ./build && touch ${marker}` } }]), text("done"));
    const denied = run(["clean up"]);
    expect(await denied.exited).to.equal(4);
    expect(denied.stderr()).to.include("denied (no --yes)").and.include("rm -rf ./build");
    expect(existsSync(marker)).to.equal(false);

    fake.script(tools([{ name: "bash", args: { command: `rm -rf ./build && touch ${marker}` } }]), text("done"));
    const allowed = run(["--yes", "clean up"]);
    expect(await allowed.exited).to.equal(0);
    expect(existsSync(marker)).to.equal(true);
  });

  it("a question fails clearly without --answer (exit 5) and is answered with --answer", async () => {
    fake.script(askDatabase());
    const r = run(["pick one"]);
    expect(await r.exited).to.equal(5);
    expect(r.stderr()).to.include("Which database?").and.include("--answer");

    fake.script(askDatabase(), text("Using SQLite."));
    const ok = run(["--answer", "sqlite", "pick one"]);
    expect(await ok.exited).to.equal(0);
    expect(ok.stdout()).to.include("Using SQLite.");
    const toolMsg = fake.requests.at(-1)?.messages.find((m) => m.role === "tool");
    expect(JSON.stringify(toolMsg)).to.include("SQLite");
  });

  it("exit 1 on end{error}, 3 on end{disconnected}", async () => {
    fake.script(fail(400, { body: { error: { message: "bad model" } } }));
    const e = run(["x"]);
    expect(await e.exited).to.equal(1);
    expect(e.stderr()).to.include("error:");

    fake.script(turn({ content: "partial" }, { cut: true }));
    const c = run(["x"]);
    expect(await c.exited).to.equal(3);
    expect(c.stdout()).to.include("partial");
  });

  it("Ctrl-C aborts the turn and exits 130; the turn ends aborted in the daemon", async () => {
    let release!: () => void;
    fake.script(turn({ content: "thinking about it" }, { waitFor: new Promise<void>((r) => (release = r)) }));
    const r = run(["long task"]);
    await r.waitFor((out) => out.includes("thinking about it"));
    r.child.kill("SIGINT");
    expect(await r.exited).to.equal(130);
    release();
    const list = await d.get("/sessions");
    const s = (await d.get(`/sessions/${list.body[0].id}`)).body;
    expect(s.status).to.equal("idle");
  });

  it("sessions marks a session that waits for its user (a pending question) until it is answered", async () => {
    const id = (await d.post("/sessions", { cwd, title: "asking session" })).body.id as string;
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(askDatabase(), text("noted"));
    await d.post(`/sessions/${id}/chat`, { text: "set it up" });
    await sse.waitFor((f) => f.json?.type === "decision_state" && f.json.question);
    const row = async () => {
      const list = agentd(d.home, ["sessions"]);
      expect(await list.exited).to.equal(0);
      return (
        list
          .stdout()
          .split("\n")
          .find((l) => l.includes("asking session")) ?? ""
      );
    };
    expect(await row()).to.match(new RegExp(`^${id}\\s+needs you: question\\s`));
    expect((await d.post(`/sessions/${id}/question`, { values: ["pg"] })).status).to.equal(202);
    await sse.waitForType("end");
    sse.close();
    const after = await row();
    expect(after).to.not.include("needs you");
    expect(after).to.match(new RegExp(`^${id}\\s+idle\\s`));
  });

  it("sessions lists them (table and --json); attach prints history and live events", async () => {
    fake.script(text("first answer"));
    expect(await run(["first question"]).exited).to.equal(0);
    const list = agentd(d.home, ["sessions"]);
    expect(await list.exited).to.equal(0);
    expect(list.stdout())
      .to.match(/^ID\s+STATE/)
      .and.include("first question")
      .and.include(cwd);
    const json = agentd(d.home, ["sessions", "--json"]);
    expect(await json.exited).to.equal(0);
    const sessions = JSON.parse(json.stdout()) as Array<{ id: string }>;
    expect(sessions).to.have.length(1);
    const id = sessions[0]?.id as string;

    const watch = agentd(d.home, ["attach", id]);
    await watch.waitFor((out) => out.includes("first answer"));
    fake.script(text("second answer"));
    expect(await run(["--session", id, "second question"]).exited).to.equal(0);
    await watch.waitFor((out, err) => out.includes("second answer") && err.includes("[turn ended: stop]"));
    expect(watch.stdout()).to.include("> second question");
    watch.child.kill("SIGINT");
    expect(await watch.exited).to.equal(0);
  });
});
