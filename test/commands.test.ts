import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { EventBusToken, silentLogger } from "../core/index.js";
import { builtinSource } from "../host/plugin-sources.js";
import commandsPlugin, {
  Checkpoints,
  DEFAULT_CHECKPOINT_OPTIONS,
  parseCommandLine,
  parseGoal,
} from "../plugins/commands/index.js";
import { builtinPlugins } from "../plugins/index.js";
import toolsFs from "../plugins/tools-fs/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools, turn } from "../testing/fake-provider.js";
import type { SseClient } from "../testing/sse.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

const extras = [toolsFs, commandsPlugin].filter((p) => !builtinPlugins.some((b) => b.manifest.id === p.manifest.id));

function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    encoding: "utf8",
  });
}

function userTexts(messages: Array<{ role: string; content: string | null }>): Array<string | null> {
  return messages.filter((m) => m.role === "user").map((m) => m.content);
}

describe("slash commands (commands plugin)", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let project: string;
  let id: string;
  let sse: SseClient;

  beforeEach(async () => {
    fake = await startFakeProvider();
    d = await startTestDaemon({
      config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" } },
      builtins: [...builtinPlugins, ...extras].map(builtinSource),
    });
    project = realpathSync(mkdtempSync(join(tmpdir(), "agentd-cmd-")));
    id = await d.createSession({ cwd: project });
    sse = await d.sse(`/sessions/${id}/events`);
    await sse.waitForType("status");
  });
  afterEach(async () => {
    sse.close();
    await d.cleanup();
    await fake.close();
    rmSync(project, { recursive: true, force: true });
  });

  const command = (line: string, sid = id) => d.post<Json>(`/sessions/${sid}/command`, { command: line });
  const global = (line: string) => d.post<Json>("/settings/command", { command: line });
  const endsSoFar = () => sse.ofType("end").length;
  /** Runs `start` and resolves once the turn it starts has ended (the next `end` event). */
  async function untilTurnEnds(start: () => Promise<unknown>) {
    const before = endsSoFar();
    await start();
    return sse.waitFor(() => endsSoFar() > before, 15_000).then(() => sse.ofType("end").at(-1)?.json);
  }
  const chatTurn = (textIn: string) =>
    untilTurnEnds(async () => expect((await d.post(`/sessions/${id}/chat`, { text: textIn })).status).to.equal(202));
  const session = async () => (await d.get<Json>(`/sessions/${id}`)).body;

  describe("routes", () => {
    it("lists the built-in commands with their flags", async () => {
      const res = await d.get<Json[]>("/commands");
      expect(res.status).to.equal(200);
      const byName = new Map(res.body.map((c: Json) => [c.name, c]));
      for (const name of [
        "/undo",
        "/fork",
        "/steer",
        "/queue",
        "/queue-reset",
        "/abort",
        "/goal",
        "/turn-cap",
        "/plan",
        "/build",
      ]) {
        expect(byName.has(name), name).to.equal(true);
      }
      expect(byName.get("/undo")).to.include({ blocking: true, global: false, takesArgs: true });
      expect(byName.get("/turn-cap")).to.include({ blocking: false, global: true });
      expect(byName.get("/abort").aliases).to.include("/stop");
    });

    it("answers 400 for input that is not a command and 404 for an unknown session", async () => {
      for (const bad of ["hello", "  ", "/", "/ undo"]) {
        const res = await command(bad);
        expect(res.status, bad).to.equal(400);
        expect(res.body.error).to.be.a("string");
      }
      expect((await d.post(`/sessions/${id}/command`, {})).status).to.equal(400);
      expect((await command("/plan", "nosuchsession")).status).to.equal(404);
    });

    it("sends an unknown slash command to the agent as ordinary text", async () => {
      fake.script(text("ok"));
      const before = fake.requests.length;
      let res: Json;
      await untilTurnEnds(async () => {
        res = await command("/frobnicate the widgets");
      });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ ok: true, command: "/frobnicate" });
      expect(res.body.data).to.deep.equal({ sentAsText: true, status: "started" });
      const req = fake.requests[before] as Json;
      expect(req.messages.at(-1)).to.deep.equal({ role: "user", content: "/frobnicate the widgets" });
    });

    it("suggests command names and their arguments", async () => {
      const names = await d.get<Json[]>("/suggest?q=%2Fun");
      expect(names.status).to.equal(200);
      expect(names.body.map((s: Json) => s.value)).to.include("/undo ");
      const perms = await d.get<Json[]>(`/suggest?q=${encodeURIComponent("/permissions b")}&session=${id}`);
      expect(perms.body).to.deep.equal([{ value: "/permissions bypass", label: "Never ask" }]);
      const models = await d.get<Json[]>(`/suggest?q=${encodeURIComponent("/model ")}&session=${id}`);
      expect(models.body.map((s: Json) => s.value)).to.include("/model fake-model");
      const personas = await d.get<Json[]>(`/suggest?q=${encodeURIComponent("/persona ")}&session=${id}`);
      expect(personas.body.length).to.be.greaterThan(0);
      expect((await d.get<Json[]>("/suggest?q=hello")).body).to.deep.equal([]);
      expect((await d.get<Json[]>("/suggest")).body).to.deep.equal([]);
    });

    it("runs the global subset without a session and refuses session-only commands", async () => {
      const cap = await global("/turn-cap");
      expect(cap.status).to.equal(200);
      expect(cap.body.data).to.include({ default: 500, effective: 500 });
      const models = await global("/model");
      expect(models.status).to.equal(200);
      expect(models.body.data.models).to.deep.equal(["fake-model"]);
      const help = await global("/help");
      expect(help.body.data.commands).to.include("/turn-cap").and.not.include("/undo");
      const undo = await global("/undo");
      expect(undo.status).to.equal(400);
      expect(undo.body.error).to.match(/requires an active session/);
      expect((await global("/nosuchcommand")).status).to.equal(400);
      expect((await global("hello")).status).to.equal(400);
      // Global forms change daemon-wide defaults (test/settings-file.test.ts); bad arguments are still 400.
      expect((await global("/permissions sometimes")).status).to.equal(400);
      expect((await global("/turn-cap 5")).status).to.equal(400);
    });
  });

  describe("turn control", () => {
    it("refuses blocking commands with 409 while a turn runs; steers, queues and aborts", async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      fake.script(turn({ content: "working " }, { waitFor: gate }, { content: "done" }));
      expect((await d.post(`/sessions/${id}/chat`, { text: "long task" })).status).to.equal(202);
      await sse.waitFor((f) => f.json?.type === "status" && f.json.status === "running");

      for (const line of ["/undo", "/plan", "/fork", "/goal fix it", "/clear", "/model x"]) {
        const res = await command(line);
        expect(res.status, line).to.equal(409);
        expect(res.body.error).to.match(/Agent running/);
        expect(res.body.code).to.equal("agent_running");
      }
      const steer = await command("/steer also check the tests");
      expect(steer.body).to.deep.include({ message: "Steered into the running turn" });
      const queued = await command("/queue then write docs");
      expect(queued.body.data).to.deep.equal({ status: "queued" });
      const reset = await command("/queue-reset");
      expect(reset.body.data).to.deep.equal({ cleared: 1 });
      const cap = await command("/turn-cap 40");
      expect(cap.status).to.equal(200);

      const abort = await command("/stop");
      expect(abort.body).to.deep.include({ command: "/abort", message: "Aborted" });
      await sse.waitFor((f) => f.json?.type === "end");
      expect(sse.ofType("end")[0]?.json.reason).to.equal("aborted");
      release();
      expect((await command("/abort")).body.result).to.equal("Nothing is running");
    });

    it("/steer and /queue start a turn when nothing runs", async () => {
      fake.script(text("a"), text("b"));
      const before = fake.requests.length;
      let res: Json;
      await untilTurnEnds(async () => {
        res = await command("/steer first");
      });
      expect(res.body).to.deep.include({ message: "Sent" });
      await untilTurnEnds(async () => {
        res = await command("/queue second");
      });
      expect(res.body.data).to.deep.equal({ status: "started" });
      expect(fake.requests.slice(before).map((r: Json) => r.messages.at(-1).content)).to.deep.equal([
        "first",
        "second",
      ]);
    });

    it("/goal runs one turn with an iteration budget of model calls", async () => {
      fake.script(...Array.from({ length: 5 }, () => tools([{ name: "ls", args: {} }])));
      const before = fake.requests.length;
      let res: Json;
      await untilTurnEnds(async () => {
        res = await command("/goal 3 tidy the project");
      });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({ status: "started", budget: 3 });
      const sent = fake.requests.slice(before) as Json[];
      expect(sent).to.have.length(3);
      const prompt = sent[0].messages.find((m: Json) => m.role === "user").content as string;
      expect(prompt).to.include("Goal: tidy the project").and.include("budget of 3 model calls");
      expect(sse.ofType("notice").some((f) => /iteration cap \(3\)/.test(f.json.message))).to.equal(true);
      expect((await command("/goal --steps 0 x")).status).to.equal(400);
      expect((await command("/goal 5")).status).to.equal(400);
    });

    it("parses goal budgets and command lines", () => {
      expect(parseGoal("fix it")).to.deep.equal({ budget: 25, goal: "fix it" });
      expect(parseGoal("7 fix it")).to.deep.equal({ budget: 7, goal: "fix it" });
      expect(parseGoal("--steps 12 fix it")).to.deep.equal({ budget: 12, goal: "fix it" });
      expect(parseGoal("-s=4 fix it")).to.deep.equal({ budget: 4, goal: "fix it" });
      expect(() => parseGoal("201 x")).to.throw(/1 to 200/);
      expect(parseCommandLine("  /Model   gpt-x  ")).to.deep.equal({ name: "model", args: "gpt-x" });
      expect(() => parseCommandLine("model")).to.throw(/Not a command/);
    });
  });

  describe("session state", () => {
    it("/turn-cap shows, sets (10..10000) and resets the session cap", async () => {
      expect((await command("/turn-cap")).body.data).to.deep.equal({ turnCap: null, default: 500, effective: 500 });
      expect((await command("/turn-cap 120")).body.data).to.include({ turnCap: 120, effective: 120 });
      expect((await command("/turn-cap")).body.data).to.include({ turnCap: 120 });
      for (const bad of ["9", "10001", "abc", "12.5"])
        expect((await command(`/turn-cap ${bad}`)).status, bad).to.equal(400);
      expect((await command("/turn-cap reset")).body.data).to.include({ turnCap: null, effective: 500 });
    });

    it("the loop stops at the /turn-cap value", async () => {
      await command("/turn-cap 10");
      fake.script(...Array.from({ length: 12 }, () => tools([{ name: "ls", args: {} }])));
      const before = fake.requests.length;
      await chatTurn("loop");
      expect(fake.requests.length - before).to.equal(10);
      expect(sse.ofType("notice").some((f) => /iteration cap \(10\)/.test(f.json.message))).to.equal(true);
    });

    it("/plan and /build switch the mode; /permissions switches the gate", async () => {
      expect((await command("/plan")).body.data).to.deep.equal({ mode: "plan" });
      expect((await session()).mode).to.equal("plan");
      expect((await command("/build")).body.data).to.deep.equal({ mode: "build" });
      expect((await session()).mode).to.equal("build");
      expect((await command("/permissions")).body.data.permissionMode).to.equal("default");
      expect((await command("/permissions bypass")).body.data.permissionMode).to.equal("bypass");
      expect((await command("/permissions")).body.data.permissionMode).to.equal("bypass");
      expect((await command("/permissions sometimes")).status).to.equal(400);
      expect((await command("/permissions default")).body.data.permissionMode).to.equal("default");
    });

    it("/fork creates an independent session with the current context", async () => {
      fake.script(text("answer"));
      await chatTurn("question");
      const res = await command("/fork");
      expect(res.status).to.equal(200);
      const forkId = res.body.data.sessionId as string;
      expect(forkId).to.be.a("string").and.not.equal(id);
      // As cast's daemon answers (its client reads result.sessionId), with the readable text kept beside it.
      expect(res.body.result).to.deep.equal({ sessionId: forkId, message: `Forked into ${forkId}` });
      expect(res.body.message).to.equal(`Forked into ${forkId}`);
      const fork = (await d.get<Json>(`/sessions/${forkId}`)).body;
      expect(userTexts(fork.messages)).to.deep.equal(["question"]);
      expect(fork.cwd).to.equal(project);
      expect((await command("/undo", forkId)).body.result).to.equal("Nothing to undo");
    });

    it("/clear empties the model's context but keeps the history", async () => {
      fake.script(text("one"), text("two"));
      await chatTurn("first message");
      const res = await command("/clear");
      expect(res.body.data).to.deep.equal({ originalTask: "first message" });
      const before = fake.requests.length;
      await chatTurn("second message");
      const sent = JSON.stringify((fake.requests[before] as Json).messages);
      expect(sent).to.include("second message").and.not.include("first message");
      expect(userTexts((await session()).messages)).to.deep.equal(["first message", "second message"]);
    });

    it("/compact summarises older turns through the provider", async () => {
      fake.script(text("a1"), text("a2"), text("SUMMARY OF EARLIER WORK"));
      await chatTurn("u1");
      await chatTurn("u2");
      const res = await command("/compact");
      expect(res.status).to.equal(200);
      expect(res.body.data.compacted).to.equal(true);
      await sse.waitForType("compaction");
      fake.script(text("a3"));
      const before = fake.requests.length;
      await chatTurn("u3");
      const sent = JSON.stringify((fake.requests[before] as Json).messages);
      expect(sent).to.include("SUMMARY OF EARLIER WORK").and.not.include('"u1"');
    });

    it("/model, /persona, /provider and /reasoning show and set session settings", async () => {
      fake.setModels(["fake-model", "other-model"]);
      const models = await command("/model");
      expect(models.body.data).to.deep.include({ model: "fake-model", models: ["fake-model", "other-model"] });
      expect(models.body.result).to.include("● fake-model").and.include("other-model");
      expect((await command("/model other-model")).body.data).to.deep.equal({ model: "other-model" });
      expect((await session()).model).to.equal("other-model");
      const typo = await command("/model other-modle");
      expect(typo.status).to.equal(400);
      expect(typo.body.error).to.include('Unknown model "other-modle"');
      expect((await session()).model).to.equal("other-model");
      fake.setModels(["fake-model"]);

      const personas = (await command("/persona")).body.data;
      expect(personas.personas.length).to.be.greaterThan(0);
      expect((await command("/persona no-such-persona")).status).to.equal(400);
      const target = personas.personas.at(-1).name as string;
      expect((await command(`/persona ${target}`)).status).to.equal(200);
      expect((await session()).persona).to.equal(target);

      const providers = (await command("/provider")).body.data;
      expect(providers.providers.length).to.be.greaterThan(0);
      expect((await command("/provider nope")).status).to.equal(400);

      expect((await command("/reasoning high")).body.data.reasoning).to.equal("high");
      expect((await command("/reasoning")).body.data.reasoning).to.equal("high");
      expect((await command("/reasoning extreme")).status).to.equal(400);
      fake.script(text("ok"));
      const before = fake.requests.length;
      await chatTurn("think");
      const req = fake.requests[before] as Json;
      expect(req.model).to.equal("other-model");
      expect((await command("/reasoning reset")).body.data.reasoning).to.equal(null);
    });

    it("/reload re-scans project resources and announces it", async () => {
      const seen: Json[] = [];
      d.daemon.services.get(EventBusToken).on("resources.reload", (e) => seen.push(e));
      const res = await command("/reload");
      expect(res.status).to.equal(200);
      expect(seen).to.deep.equal([{ type: "resources.reload", cwd: project, sessionId: id }]);
      await sse.waitForType("resources_reloaded");
      expect((await global("/reload")).status).to.equal(200);
      expect(seen).to.have.length(2);
    });

    it("informational commands answer with lists or a clear message", async () => {
      for (const line of ["/skills", "/mcp", "/hooks", "/rules", "/web", "/ssh", "/theme", "/worktree", "/help"]) {
        const res = await command(line);
        expect(res.status, line).to.equal(200);
        expect(res.body.result, line).to.be.a("string").and.not.equal("");
      }
      expect((await command("/theme no-such-theme")).status).to.equal(400);
      expect((await command("/repo")).body.data).to.deep.equal({ cwd: project, isGit: false });
      gitIn(project, "init", "-q", "-b", "main");
      gitIn(project, "commit", "-q", "--allow-empty", "-m", "init");
      const repo = (await command("/repo")).body.data;
      expect(repo).to.include({ isGit: true, branch: "main", dirty: false });
      const wt = (await command("/worktree")).body.data.worktrees;
      expect(wt).to.have.length(1);
      expect(wt[0]).to.include({ path: project, branch: "main" });
    });
  });

  describe("/undo", () => {
    /** One turn writing `a.txt` (modify) and `new/b.txt` (create), then a final answer. */
    async function writingTurn(extra: Array<{ path: string; content: string }> = []) {
      fake.script(
        tools([
          { name: "write", args: { path: "a.txt", content: "changed\n" } },
          { name: "write", args: { path: "new/deep/b.txt", content: "created\n" } },
          ...extra.map((args) => ({ name: "write", args })),
        ]),
        text("done"),
      );
      const end = await chatTurn("edit the files");
      expect(end.reason).to.equal("stop");
      expect(readFileSync(join(project, "a.txt"), "utf8")).to.equal("changed\n");
      expect(existsSync(join(project, "new/deep/b.txt"))).to.equal(true);
    }

    async function undoesFilesAndMessages() {
      const refused = await command("/undo");
      expect(refused.status).to.equal(409);
      expect(refused.body.code).to.equal("undo_needs_force");
      expect(refused.body.createdFiles).to.deep.equal(["new/deep/b.txt"]);
      expect(refused.body.error).to.include("/undo --force");
      expect(readFileSync(join(project, "a.txt"), "utf8")).to.equal("changed\n");

      const res = await command("/undo --force");
      expect(res.status).to.equal(200);
      expect(res.body.data).to.include({ undone: true, filesRestored: true });
      expect(res.body.data.restored).to.deep.equal(["a.txt"]);
      expect(res.body.data.removed).to.deep.equal(["new/deep/b.txt"]);
      expect(readFileSync(join(project, "a.txt"), "utf8")).to.equal("original\n");
      expect(existsSync(join(project, "new"))).to.equal(false);
      const view = await session();
      expect(view.messages).to.deep.equal([]);
      expect(view.messageCount).to.equal(0);
      await sse.waitForType("undo");
      const again = await command("/undo");
      expect(again.status).to.equal(200);
      expect(again.body).to.deep.include({ message: "Nothing to undo" });
      expect(again.body.data).to.deep.equal({ undone: false });
    }

    it("restores modified files and removes created ones outside git (--force flow)", async () => {
      writeFileSync(join(project, "a.txt"), "original\n");
      await writingTurn();
      await undoesFilesAndMessages();
    });

    it("works in a git repository without touching its index, and leaves ignored files alone", async () => {
      writeFileSync(join(project, "a.txt"), "original\n");
      writeFileSync(join(project, ".gitignore"), "*.log\n");
      gitIn(project, "init", "-q", "-b", "main");
      gitIn(project, "add", "-A");
      gitIn(project, "commit", "-q", "-m", "init");
      writeFileSync(join(project, "staged.txt"), "staged\n");
      gitIn(project, "add", "staged.txt");
      const statusBefore = gitIn(project, "status", "--porcelain");
      await writingTurn([{ path: "build.log", content: "ignored output\n" }]);
      await undoesFilesAndMessages();
      expect(readFileSync(join(project, "build.log"), "utf8")).to.equal("ignored output\n");
      rmSync(join(project, "build.log"));
      expect(gitIn(project, "status", "--porcelain")).to.equal(statusBefore);
      expect(gitIn(project, "log", "--oneline")).to.match(/^[0-9a-f]+ init\n$/);
    });

    it("undoes only the last turn and needs no --force when no file was created", async () => {
      writeFileSync(join(project, "a.txt"), "v0\n");
      fake.script(tools([{ name: "write", args: { path: "a.txt", content: "v1\n" } }]), text("one"));
      await chatTurn("first");
      fake.script(tools([{ name: "write", args: { path: "a.txt", content: "v2\n" } }]), text("two"));
      await chatTurn("second");
      fake.script(text("just talking"));
      await chatTurn("third, no tools");

      const talk = await command("/undo");
      expect(talk.body.data).to.include({ undone: true, filesRestored: false });
      expect(readFileSync(join(project, "a.txt"), "utf8")).to.equal("v2\n");
      expect(userTexts((await session()).messages)).to.deep.equal(["first", "second"]);

      const res = await command("/undo");
      expect(res.status).to.equal(200);
      expect(res.body.data).to.include({ undone: true, filesRestored: true });
      expect(readFileSync(join(project, "a.txt"), "utf8")).to.equal("v1\n");
      expect(userTexts((await session()).messages)).to.deep.equal(["first"]);

      // The conversation continues from the restored point.
      fake.script(text("again"));
      const before = fake.requests.length;
      await chatTurn("retry");
      const sent = JSON.stringify((fake.requests[before] as Json).messages);
      expect(sent).to.include("first").and.not.include("second");
    });

    it("refuses /undo with bad flags and drops checkpoints with the session", async () => {
      expect((await command("/undo --hard")).status).to.equal(400);
      writeFileSync(join(project, "a.txt"), "original\n");
      await writingTurn();
      const dir = join(d.home, "plugins-data", "commands", "checkpoints", id);
      expect(existsSync(dir)).to.equal(true);
      sse.close();
      expect((await d.delete(`/sessions/${id}/permanent`)).status).to.equal(200);
      expect(existsSync(dir)).to.equal(false);
    });
  });
});

describe("commands plugin checkpoint limits", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let project: string;

  before(async () => {
    fake = await startFakeProvider();
    d = await startTestDaemon({
      config: {
        provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" },
        pluginOptions: { commands: { checkpoints: { maxFiles: 5 } } },
      },
      builtins: [...builtinPlugins, ...extras].map(builtinSource),
    });
    project = realpathSync(mkdtempSync(join(tmpdir(), "agentd-cmd-big-")));
  });
  after(async () => {
    await d.cleanup();
    await fake.close();
    rmSync(project, { recursive: true, force: true });
  });

  it("skips the snapshot of a directory over the file limit, says so, and still undoes the messages", async () => {
    mkdirSync(join(project, "many"));
    for (let i = 0; i < 8; i++) writeFileSync(join(project, "many", `f${i}.txt`), `${i}`);
    const id = await d.createSession({ cwd: project });
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(tools([{ name: "write", args: { path: "x.txt", content: "x" } }]), text("done"));
    await d.post(`/sessions/${id}/chat`, { text: "go" });
    await sse.waitForType("end", 15_000);
    const notice = sse.ofType("notice").find((f) => /No file checkpoint/.test(f.json.message));
    expect(notice?.json.message).to.include("more than 5 files");
    const res = await d.post<Json>(`/sessions/${id}/command`, { command: "/undo" });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({ undone: true, filesRestored: false });
    expect(res.body.result).to.include("files were not restored");
    expect(existsSync(join(project, "x.txt"))).to.equal(true);
    expect((await d.get<Json>(`/sessions/${id}`)).body.messages).to.deep.equal([]);
    sse.close();
  });

  it("rejects invalid plugin options at start", async () => {
    const bad = await startTestDaemon({
      config: { pluginOptions: { commands: { checkpoints: { maxFiles: 0 } } } },
      builtins: [...builtinPlugins, ...extras].map(builtinSource),
    });
    try {
      const status = await bad.get<Json>("/server/status");
      const entry = JSON.stringify(status.body);
      expect(entry).to.match(/pluginOptions\.commands/);
      expect((await bad.get("/commands")).status).to.equal(404);
    } finally {
      await bad.cleanup();
    }
  });
});

describe("Checkpoints (shadow repository)", () => {
  let root: string;
  let work: string;
  const notices: string[] = [];
  const make = (opts: Partial<typeof DEFAULT_CHECKPOINT_OPTIONS> = {}) =>
    new Checkpoints(
      () => join(root, "data"),
      { ...DEFAULT_CHECKPOINT_OPTIONS, ...opts },
      silentLogger,
      (_id, m) => notices.push(m),
    );

  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "agentd-cp-")));
    work = join(root, "work");
    mkdirSync(work);
    notices.length = 0;
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("keeps only the newest checkpoints and their refs", async () => {
    const cp = make({ keep: 2 });
    for (const seq of [1, 5, 9]) {
      writeFileSync(join(work, "f.txt"), `v${seq}`);
      cp.begin("s1", seq);
      await cp.snapshot("s1", work);
    }
    const refs = gitIn(work, "--git-dir", join(root, "data", "s1", "repo"), "for-each-ref", "--format=%(refname)");
    expect(refs.trim().split("\n").sort()).to.deep.equal(["refs/checkpoints/5", "refs/checkpoints/9"]);
    expect(cp.last("s1")).to.deep.equal({ seq: 9, hasFiles: true });
    // State survives a restart of the plugin.
    expect(make({ keep: 2 }).last("s1")).to.deep.equal({ seq: 9, hasFiles: true });
  });

  it("leaves files over the size limit out of checkpoints (never restored, never deleted)", async () => {
    const cp = make({ maxFileBytes: 10 });
    writeFileSync(join(work, "small.txt"), "before");
    writeFileSync(join(work, "big.bin"), "a".repeat(100));
    cp.begin("s1", 1);
    await cp.snapshot("s1", work);
    writeFileSync(join(work, "small.txt"), "after");
    writeFileSync(join(work, "big.bin"), "b".repeat(100));
    writeFileSync(join(work, "big2.bin"), "c".repeat(100));
    const out = await cp.undo("s1", work, false);
    expect(out).to.deep.include({ seq: 1, filesRestored: true, created: [], modified: ["small.txt"] });
    expect(readFileSync(join(work, "small.txt"), "utf8")).to.equal("before");
    expect(readFileSync(join(work, "big.bin"), "utf8")).to.equal("b".repeat(100));
    expect(existsSync(join(work, "big2.bin"))).to.equal(true);
    expect(await cp.undo("s1", work, false)).to.equal(undefined);
  });

  it("restores files the turn deleted and tolerates odd file names", async () => {
    const cp = make();
    const odd = "we ird[1]*?.txt ";
    writeFileSync(join(work, odd), "odd");
    mkdirSync(join(work, "dir"));
    writeFileSync(join(work, "dir", "keep.txt"), "keep");
    cp.begin("s1", 3);
    await cp.snapshot("s1", work);
    rmSync(join(work, odd));
    rmSync(join(work, "dir"), { recursive: true });
    const out = await cp.undo("s1", work, false);
    expect(out?.deleted.sort()).to.deep.equal(["dir/keep.txt", odd].sort());
    expect(readFileSync(join(work, odd), "utf8")).to.equal("odd");
    expect(readFileSync(join(work, "dir", "keep.txt"), "utf8")).to.equal("keep");
  });

  it("still tracks turns when file checkpoints are turned off", async () => {
    const cp = make({ enabled: false });
    writeFileSync(join(work, "a.txt"), "before");
    cp.begin("s1", 4);
    await cp.snapshot("s1", work);
    writeFileSync(join(work, "a.txt"), "after");
    const out = await cp.undo("s1", work, false);
    expect(out).to.deep.include({ seq: 4, filesRestored: false });
    expect(out?.note).to.include("turned off");
    expect(readFileSync(join(work, "a.txt"), "utf8")).to.equal("after");
    expect(existsSync(join(root, "data", "s1", "repo"))).to.equal(false);
  });

  it("turns checkpoints off for a directory over the file limit, with one notice", async () => {
    const cp = make({ maxFiles: 3 });
    for (let i = 0; i < 5; i++) writeFileSync(join(work, `f${i}`), "x");
    cp.begin("s1", 1);
    await cp.snapshot("s1", work);
    cp.begin("s1", 2);
    await cp.snapshot("s1", work);
    expect(notices).to.have.length(1);
    expect(notices[0]).to.include("more than 3 files").and.include("off for this session");
    expect(cp.last("s1")).to.deep.equal({ seq: 2, hasFiles: false });
  });
});
