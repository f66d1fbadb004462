import { expect } from "chai";
import { parseCommandLine, parseGoal } from "../plugins/commands/index.js";
import { text, tools, turn } from "../testing/fake-provider.js";
import { commandsFixture, type Json } from "./support/commands.js";

describe("slash commands (commands plugin)", function () {
  this.timeout(30_000);
  const { fx, command, global, untilTurnEnds } = commandsFixture();

  describe("routes", () => {
    it("lists the built-in commands with their flags", async () => {
      const res = await fx.d.get<Json[]>("/commands");
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
      expect((await fx.d.post(`/sessions/${fx.id}/command`, {})).status).to.equal(400);
      expect((await command("/plan", "nosuchsession")).status).to.equal(404);
    });

    it("sends an unknown slash command to the agent as ordinary text", async () => {
      fx.fake.script(text("ok"));
      const before = fx.fake.requests.length;
      let res: Json;
      await untilTurnEnds(async () => {
        res = await command("/frobnicate the widgets");
      });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ ok: true, command: "/frobnicate" });
      expect(res.body.data).to.deep.equal({ sentAsText: true, status: "started" });
      const req = fx.fake.requests[before] as Json;
      expect(req.messages.at(-1)).to.deep.equal({ role: "user", content: "/frobnicate the widgets" });
    });

    it("suggests command names and their arguments", async () => {
      const names = await fx.d.get<Json[]>("/suggest?q=%2Fun");
      expect(names.status).to.equal(200);
      expect(names.body.map((s: Json) => s.value)).to.include("/undo ");
      const perms = await fx.d.get<Json[]>(`/suggest?q=${encodeURIComponent("/permissions b")}&session=${fx.id}`);
      expect(perms.body).to.deep.equal([{ value: "/permissions bypass", label: "Never ask" }]);
      const models = await fx.d.get<Json[]>(`/suggest?q=${encodeURIComponent("/model ")}&session=${fx.id}`);
      expect(models.body.map((s: Json) => s.value)).to.include("/model fake-model");
      const personas = await fx.d.get<Json[]>(`/suggest?q=${encodeURIComponent("/persona ")}&session=${fx.id}`);
      expect(personas.body.length).to.be.greaterThan(0);
      expect((await fx.d.get<Json[]>("/suggest?q=hello")).body).to.deep.equal([]);
      expect((await fx.d.get<Json[]>("/suggest")).body).to.deep.equal([]);
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
      fx.fake.script(turn({ content: "working " }, { waitFor: gate }, { content: "done" }));
      expect((await fx.d.post(`/sessions/${fx.id}/chat`, { text: "long task" })).status).to.equal(202);
      await fx.sse.waitFor((f) => f.json?.type === "status" && f.json.status === "running");

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
      await fx.sse.waitFor((f) => f.json?.type === "end");
      expect(fx.sse.ofType("end")[0]?.json.reason).to.equal("aborted");
      release();
      expect((await command("/abort")).body.result).to.equal("Nothing is running");
    });

    it("/steer and /queue start a turn when nothing runs", async () => {
      fx.fake.script(text("a"), text("b"));
      const before = fx.fake.requests.length;
      let res: Json;
      await untilTurnEnds(async () => {
        res = await command("/steer first");
      });
      expect(res.body).to.deep.include({ message: "Sent" });
      await untilTurnEnds(async () => {
        res = await command("/queue second");
      });
      expect(res.body.data).to.deep.equal({ status: "started" });
      expect(fx.fake.requests.slice(before).map((r: Json) => r.messages.at(-1).content)).to.deep.equal([
        "first",
        "second",
      ]);
    });

    it("/goal runs one turn with an iteration budget of model calls", async () => {
      fx.fake.script(...Array.from({ length: 5 }, () => tools([{ name: "ls", args: {} }])));
      const before = fx.fake.requests.length;
      let res: Json;
      await untilTurnEnds(async () => {
        res = await command("/goal 3 tidy the project");
      });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({ status: "started", budget: 3 });
      const sent = fx.fake.requests.slice(before) as Json[];
      expect(sent).to.have.length(3);
      const prompt = sent[0].messages.find((m: Json) => m.role === "user").content as string;
      expect(prompt).to.include("Goal: tidy the project").and.include("budget of 3 model calls");
      expect(fx.sse.ofType("notice").some((f) => /iteration cap \(3\)/.test(f.json.message))).to.equal(true);
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
});
