import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { startTestDaemon, type TestDaemon } from "./support/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools, turn } from "./support/fake-provider.js";
import { askDatabase } from "./support/questions.js";
import { requireTmux, TmuxPane } from "./support/tmux.js";

const MAIN = fileURLToPath(new URL("../host/main.js", import.meta.url));

/**
 * The interactive client in a real terminal (tmux), typed into as a person would, against the real daemon and the
 * fake provider. Every wait polls the screen for what a user would see.
 */
describe("terminal client: interactive, in tmux", function () {
  this.timeout(40_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let cwd: string;
  let pane: TmuxPane | undefined;

  before(() => {
    requireTmux();
  });
  beforeEach(async () => {
    fake = await startFakeProvider();
    cwd = realpathSync(mkdtempSync(join(tmpdir(), "agentd-tui-")));
    d = await startTestDaemon({ config: { provider: { baseURL: fake.url, apiKey: "k", model: "fake-model" } } });
  });
  afterEach(async () => {
    await pane?.kill();
    pane = undefined;
    await d.cleanup();
    await fake.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  const open = async (args: string[] = [], size = { width: 100, height: 30 }) => {
    pane = await TmuxPane.start([process.execPath, MAIN, "--home", d.home, "chat", ...args], { cwd, ...size });
    // The composer, and the session loaded (its header printed).
    await pane.waitFor((s) => s.includes("ask anything") && s.includes("· session "));
    return pane;
  };
  const send = async (p: TmuxPane, message: string) => {
    await p.type(message);
    await p.keys("Enter");
  };
  const sessionId = async () => ((await d.get("/sessions")).body as Array<{ id: string }>)[0]?.id as string;

  it("streams a Markdown answer and shows one line per tool call", async () => {
    fake.script(
      tools([{ name: "ls", args: { path: "." } }]),
      turn({ content: "# Findings\n\nThe file has **two** parts.\n\n" }, { content: "- first item\n- second item\n" }),
    );
    const p = await open();
    await send(p, "what is here?");
    const screen = await p.waitFor("second item");
    expect(screen).to.include("› what is here?");
    expect(screen).to.include("✓ [ls] .");
    expect(screen).to.include("The file has two parts.");
    expect(screen).to.not.include("**two**");
    expect(screen).to.match(/\* first item/);
  });

  it("asks before a dangerous command: deny blocks it, allow runs it once", async () => {
    const marker = join(cwd, "marker");
    const dangerous = () => tools([{ name: "bash", args: { command: `rm -rf ./build && touch ${marker}` } }]);
    fake.script(dangerous(), text("I did not run it."));
    const p = await open();
    await send(p, "clean");
    await p.waitFor("Run this command?");
    expect(await p.screen())
      .to.include("$ rm -rf ./build")
      .and.include("recursive");
    await p.keys("d");
    await p.waitFor("I did not run it.");
    // Reported once: the call's own line says who denied it, without the model-facing error text.
    const history = await p.history();
    expect(history).to.include("denied by you");
    expect(history.split("rm -rf ./build").length - 1).to.equal(1);
    expect(history).to.not.include("permission_denied");
    expect(existsSync(marker)).to.equal(false);

    fake.script(dangerous(), text("Cleaned."));
    await send(p, "clean, really");
    await p.waitFor((s) => s.split("Run this command?").length === 2 && s.includes("clean, really"));
    await p.keys("Enter"); // "Allow once" is the first choice
    await p.waitFor("Cleaned.");
    expect(await p.history()).to.include("allowed: rm -rf ./build");
    expect(existsSync(marker)).to.equal(true);
  });

  it("remembers an answer as a project rule with p, shows why it asks, and lists rules with /permissions rules", async () => {
    const command = "rm -rf ./build";
    fake.script(tools([{ name: "bash", args: { command } }]), text("Cleaned once."));
    const p = await open();
    await send(p, "clean");
    await p.waitFor("Run this command?");
    expect(await p.screen())
      .to.include("[risky]")
      .and.include("rule: rm -rf ./build")
      .and.include("Always allow in this project");
    await p.keys("p");
    await p.waitFor("Cleaned once.");
    const rules = (await d.get("/permissions/rules")).body.rules;
    expect(rules.map((r: { scope: string; pattern: string }) => [r.scope, r.pattern])).to.deep.equal([
      ["project", command],
    ]);
    fake.script(tools([{ name: "bash", args: { command } }]), text("Cleaned twice."));
    await send(p, "again");
    await p.waitFor("Cleaned twice.");
    // Asked (and allowed) once only: the second run matched the rule.
    expect((await p.history()).split("allowed: rm -rf ./build")).to.have.length(2);
    await send(p, "/permissions rules");
    await p.waitFor("Approval rules");
    expect(await p.history()).to.include(`allow ${command}`);
  });

  it("answers a question with a picker", async () => {
    fake.script(askDatabase(), text("SQLite it is."));
    const p = await open();
    await send(p, "set up storage");
    await p.waitFor("Other (type an answer)"); // the picker (the tool line names the question too)
    await p.keys("Down");
    await p.keys("Enter");
    await p.waitFor("SQLite it is.");
    const hist = await p.history();
    expect(hist, hist).to.include("answered: sqlite");
    const toolMsg = fake.requests.at(-1)?.messages.find((m) => m.role === "tool");
    expect(JSON.stringify(toolMsg)).to.include("SQLite");
  });

  it("answers several questions: a multi-select with Space, then a typed answer", async () => {
    fake.script(
      tools([
        {
          name: "question",
          args: {
            questions: [
              {
                question: "Which targets?",
                multiSelect: true,
                options: [
                  { label: "Linux", value: "linux" },
                  { label: "macOS", value: "mac" },
                  { label: "Windows", value: "win" },
                ],
              },
              {
                question: "Release name?",
                options: [
                  { label: "Alpha", value: "alpha" },
                  { label: "Beta", value: "beta" },
                ],
              },
            ],
          },
        },
      ]),
      text("Noted."),
    );
    const p = await open();
    await send(p, "plan the release");
    await p.waitFor("Space toggle");
    await p.keys("Space");
    await p.keys("Down", "Down", "Space", "Enter");
    await p.waitFor("(2/2) Release name?");
    await p.keys("3"); // "Other (type an answer)"
    await p.waitFor("answer:");
    await p.type("Gamma");
    await p.keys("Enter");
    await p.waitFor("Noted.");
    expect(await p.history()).to.include("answered: linux, win; Gamma");
  });

  it("asks for trust when a project has local resources: trusting it", async () => {
    writeFileSync(join(cwd, "AGENTS.md"), "Be brief.");
    pane = await TmuxPane.start([process.execPath, MAIN, "--home", d.home, "chat"], { cwd });
    await pane.waitFor("Trust the project");
    expect(await pane.screen()).to.include("context files: AGENTS.md");
    await pane.keys("t");
    await pane.waitFor("its local resources load");
    const trust = await d.get(`/projects/trust?cwd=${encodeURIComponent(cwd)}`);
    expect(trust.body.trusted).to.equal(true);
  });

  it("asks for trust when a project has local resources: declining it", async () => {
    writeFileSync(join(cwd, "AGENTS.md"), "Be brief.");
    pane = await TmuxPane.start([process.execPath, MAIN, "--home", d.home, "chat", "hello"], { cwd });
    await pane.waitFor("Trust the project");
    expect(fake.requests).to.have.length(0); // the first message waits for the decision
    await pane.keys("n");
    await pane.waitFor("global resources only");
    await pane.waitFor("Hello from the fake provider.");
    const trust = await d.get(`/projects/trust?cwd=${encodeURIComponent(cwd)}`);
    expect(trust.body.trusted).to.equal(false);
    expect(trust.body.decidedAt).to.be.a("string");
  });

  it("steers a running turn with Enter and aborts it with Esc", async () => {
    let release!: () => void;
    fake.script(turn({ content: "Working on it" }, { waitFor: new Promise<void>((r) => (release = r)) }));
    const p = await open();
    await send(p, "long job");
    await p.waitFor((s) => s.includes("Working on it") && s.includes("Esc aborts"));
    await send(p, "also update the docs");
    await p.waitFor("steering: also update the docs");
    await p.keys("Escape");
    await p.waitFor("turn aborted");
    release();
    const s = (await d.get(`/sessions/${await sessionId()}`)).body;
    expect(s.status).to.equal("idle");
    expect(await p.screen()).to.include("ask anything");
  });

  it("/sessions switches to another session", async () => {
    const p = await open();
    const first = await sessionId();
    const other = (await d.post("/sessions", { cwd, title: "other work" })).body.id as string;
    await send(p, "/sessions");
    const screen = await p.waitFor("Switch to a session");
    const line = screen.split("\n").find((l) => l.includes("other work")) ?? "";
    const n = /(\d+)\. other work/.exec(line)?.[1];
    expect(n, screen).to.be.a("string");
    await p.keys(n as string);
    await p.waitFor(`session ${other} · other work`);
    await send(p, "hi there");
    await p.waitFor("Hello from the fake provider.");
    const o = (await d.get(`/sessions/${other}`)).body;
    expect(o.messages.map((m: { content: string }) => m.content)).to.include("hi there");
    expect((await d.get(`/sessions/${first}`)).body.messageCount).to.equal(0);
  });

  it("/sessions marks a session that waits for its user", async () => {
    const p = await open();
    const other = (await d.post("/sessions", { cwd, title: "asking work" })).body.id as string;
    const sse = await d.sse(`/sessions/${other}/events`);
    fake.script(askDatabase(), text("noted"));
    await d.post(`/sessions/${other}/chat`, { text: "set it up" });
    await sse.waitFor((f) => f.json?.type === "decision_state" && f.json.question);
    await send(p, "/sessions");
    const screen = await p.waitFor("Switch to a session");
    const line = screen.split("\n").find((l) => l.includes("asking work")) ?? "";
    expect(line, screen).to.include("[needs you: question]");
    await p.keys("Escape");
    await p.waitFor((s) => !s.includes("Switch to a session"));
    expect((await d.post(`/sessions/${other}/question`, { values: ["pg"] })).status).to.equal(202);
    await sse.waitForType("end");
    sse.close();
    await send(p, "/sessions");
    const again = await p.waitFor("Switch to a session");
    const line2 = again.split("\n").find((l) => l.includes("asking work")) ?? "";
    expect(line2, again).to.include("asking work").and.not.include("needs you");
  });

  it("completes slash commands with Tab and keeps the layout on resize", async () => {
    const p = await open([], { width: 100, height: 30 });
    await p.type("/pla");
    await p.waitFor("/plan");
    await p.keys("Tab");
    await p.waitFor((s) => /› \/plan\s*$/m.test(s));
    await p.keys("Enter");
    await p.waitFor(/default · plan ·/);

    await p.resize(60, 20);
    const rule = "─".repeat(59);
    const screen = await p.waitFor((s) => s.includes(rule) && !s.includes("─".repeat(61)));
    for (const l of screen.split("\n")) expect(l.length, l).to.be.at.most(60);
    fake.script(text("A long answer that has to wrap because the terminal is now only sixty columns wide."));
    await send(p, "narrow");
    const after = await p.waitFor("sixty");
    for (const l of after.split("\n")) expect(l.length, l).to.be.at.most(60);
  });

  it("offers the finished plan: approving it switches to build, turns its steps into todos and starts building", async () => {
    const p = await open();
    const id = await sessionId();
    await send(p, "/plan");
    await p.waitFor(/default · plan ·/);
    fake.script(
      tools([
        {
          name: "write",
          args: { path: `.agentd/plans/${id}/plan.md`, content: "# Plan\n\n## Steps\n- [ ] add the cache\n" },
        },
      ]),
      tools([{ name: "plan_done", args: { summary: "Add a cache" } }]),
      text("Building it now."),
    );
    await send(p, "plan a cache");
    await p.waitFor("The plan is ready.");
    expect(await p.screen())
      .to.include("Approve and build")
      .and.include("Add a cache");
    await p.keys("Enter");
    await p.waitFor("Building it now.");
    const screen = await p.waitFor(/default · build ·/);
    expect(screen).to.include("☐ add the cache");
    expect((await d.get(`/sessions/${id}`)).body.mode).to.equal("build");
  });

  it("keeps planning when asked: the daemon's pending plan choice is cleared and the session stays in plan mode", async () => {
    const p = await open();
    const id = await sessionId();
    await send(p, "/plan");
    await p.waitFor(/default · plan ·/);
    fake.script(
      tools([
        {
          name: "write",
          args: { path: `.agentd/plans/${id}/plan.md`, content: "# Plan\n\n## Steps\n- [ ] add the cache\n" },
        },
      ]),
      tools([{ name: "plan_done", args: { summary: "Add a cache" } }]),
    );
    await send(p, "plan a cache");
    await p.waitFor("The plan is ready.");
    const sse = await d.sse(`/sessions/${id}/events`);
    await sse.waitForType("status");
    await p.keys("Down");
    await p.keys("Enter");
    await p.waitFor("the plan stays open");
    const cleared = await sse.waitFor((f) => f.json?.type === "decision_state");
    sse.close();
    expect(cleared.json.planTransition).to.equal(undefined);
    const view = (await d.get(`/sessions/${id}`)).body;
    expect(view.planTransition).to.equal(undefined);
    expect(view.mode).to.equal("plan");
  });

  it("recalls input history with ↑ across runs and completes @paths with Tab", async () => {
    writeFileSync(join(cwd, "main.ts"), "export {};\n");
    const first = await open();
    await send(first, "first message");
    await first.waitFor("Hello from the fake provider.");
    await first.keys("C-c");
    await first.keys("C-c");
    await first.waitForExit();
    await first.kill();
    const p = await open();
    await p.keys("Up");
    await p.waitFor((s) => /› first message\s*$/m.test(s));
    await p.keys("C-u");
    await p.type("look at @mai");
    await p.waitFor("@main.ts");
    await p.keys("Tab");
    await p.waitFor((s) => /› look at @main\.ts\s*$/m.test(s));
  });

  it("collapses a long paste to a chip and sends it in full", async () => {
    const p = await open();
    const long = Array.from({ length: 10 }, (_, i) => `pasted line ${i}`).join("\n");
    await p.paste(long);
    await p.waitFor("[Pasted text #1 +10 lines]");
    await p.type(" explain");
    await p.keys("Enter");
    await p.waitFor("Hello from the fake provider.");
    const user = fake.requests
      .at(-1)
      ?.messages.filter((m) => m.role === "user")
      .at(-1);
    expect(user?.content).to.equal(`${long} explain`);
  });

  it("says when the daemon goes away, follows it when it is back (new port) and resumes the stream", async () => {
    const p = await open();
    const home = d.home;
    await d.stop();
    await p.waitFor("connection to the daemon lost");
    d = await startTestDaemon({ home, config: { provider: { baseURL: fake.url, apiKey: "k", model: "fake-model" } } });
    await p.waitFor("reconnected", 20_000);
    fake.script(text("Back again."));
    await send(p, "still there?");
    await p.waitFor("Back again.");
  });

  it("Ctrl-C twice quits and says how to resume", async () => {
    const p = await open();
    const id = await sessionId();
    await p.keys("C-c");
    await p.waitFor("Ctrl-C again to quit");
    await p.keys("C-c");
    await p.waitForExit();
    expect(await p.history()).to.include(`agentd chat --session ${id}`);
  });
});
